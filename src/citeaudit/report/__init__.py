"""Reports: the typed results of a run (results.py) rendered as a terminal table, Markdown or JSON
(render.py) and as one self-contained HTML page (html.py)."""
