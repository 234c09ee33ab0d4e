"""Placeholder: this module is being written (see the open issues)."""

__all__: list[str] = []
