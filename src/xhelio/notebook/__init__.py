"""xhelio in Jupyter: `%load_ext xhelio`, the `%%xhelio` cell magic, sessions as notebooks.

```python
%load_ext xhelio
```
```
%%xhelio
ACE magnetic field magnitude for 2024-01-15
```

Each `%%xhelio` cell is one turn in the kernel's session (`%%xhelio --new` starts a new
one); the answer shows as text, an interactive Plotly figure, the first rows of the data
and the datasets to cite. `session_notebook` writes a session's requests as a notebook that
runs them again. Needs the `notebook` extra (IPython, nbformat).
"""

from xhelio.notebook.display import AnswerView
from xhelio.notebook.export import session_notebook, write_session_notebook
from xhelio.notebook.magic import load_ipython_extension

__all__ = ["AnswerView", "load_ipython_extension", "session_notebook", "write_session_notebook"]
