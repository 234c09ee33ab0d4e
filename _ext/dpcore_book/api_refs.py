"""The API page: ``dpcore.name`` resolved to the submodule that documents ``name``; public constants shown."""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx


def _on_missing_reference(app: Sphinx, env: Any, node: Any, contnode: nodes.Element) -> nodes.Element | None:
    """Resolve ``dpcore.name`` to where ``name`` is documented (``dpcore.<submodule>.name``).

    Every public name is importable from :mod:`dpcore` and docstrings refer to it
    that way; the API page documents it in the submodule that defines it.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if not target.startswith("dpcore.") or target.count(".") != 1:
        return None
    import dpcore

    obj = getattr(dpcore, target.split(".", 1)[1], None)
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module or not qualname or not module.startswith("dpcore."):
        return None
    canonical = f"{module}.{qualname}"
    domain = env.get_domain("py")
    if canonical not in domain.objects:
        return None
    from sphinx.util.nodes import make_refnode

    entry = domain.objects[canonical]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, canonical)


def _public_data_documenter() -> type:
    """An autodoc documenter for module constants listed in ``__all__`` without a ``#:`` comment.

    autodoc's own ``DataDocumenter`` documents module data only when it has a
    doc-comment; a public constant (in ``__all__``) must appear on the API page
    all the same. Lower priority than ``DataDocumenter``, so a doc-comment wins.
    """
    import inspect

    from sphinx.ext.autodoc import DataDocumenter, ModuleDocumenter

    class PublicDataDocumenter(DataDocumenter):
        objtype = "publicdata"
        directivetype = "data"
        priority = DataDocumenter.priority - 10

        @classmethod
        def can_document_member(cls, member: Any, membername: str, isattr: bool, parent: Any) -> bool:
            if not isinstance(parent, ModuleDocumenter):
                return False
            public = getattr(parent.object, "__all__", None) or ()
            return membername in public and not (
                inspect.isroutine(member) or inspect.isclass(member) or inspect.ismodule(member)
            )

        def get_doc(self) -> list[list[str]]:
            # no doc-comment (else DataDocumenter would have won): show the value, not the
            # docstring of the value's class (a sympy Symbol's, say)
            return []

    return PublicDataDocumenter


def setup(app: Sphinx) -> None:
    app.connect("missing-reference", _on_missing_reference)
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(_public_data_documenter())
