"""Planning for multi-step requests: routing, plans and tasks, the execute-replan loop.

* `routing`: `is_complex_request`, the once-resolved plan time range, agent preferences
  and the heuristic planner decision.
* `tasks` / `store`: `Task`, `TaskPlan` and the SQLite `TaskStore`.
* `schema`: the planner's structured output and the reviewer's decision.
* `loop`: `PlanLoop`, the same plan-execute-replan loop for every planner.
* `llm_planner`: the pydantic-ai planner and reviewer.

Nothing here imports the interfaces layer; the package itself imports nothing.
"""
