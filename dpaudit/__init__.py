"""dpaudit: formal privacy accounting and Monte Carlo auditing of differentially private code."""

__version__ = "0.1.0"
