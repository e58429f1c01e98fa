"""SQL test corpora (see hostile.py)."""
