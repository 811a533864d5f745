"""Bridges to other privacy libraries (optional dependencies, imported only when used).

* :mod:`dpaudit.integrations.dp_accounting` -- Google dp_accounting ``DpEvent`` trees (read
  and written).
* :mod:`dpaudit.integrations.opacus` -- Opacus accountant histories (read, without importing
  opacus or torch).
"""
