"""citeaudit inside the tools teams already run: evaluation harnesses (DeepEval, RAGAS, MLflow, Inspect)
and applications (a LangChain guard), each a thin adapter over `core.check_citations` (docs/integrations.md).

Each adapter lives in its own module and imports its library only there, behind its own extra
(`pip install 'citeaudit[deepeval]'` and so on); this package imports nothing heavy.
"""
