"""`xhelio plan list` and `xhelio plan show ID`: the plans multi-step requests produced.

Plans are written by the planning loop to `$XHELIO_HOME/plans.sqlite` after every task;
these commands only read them (opening the store marks plans whose process died
`interrupted`, and `list` says how to resume them). `--json` prints the stored record
(`TaskPlan.to_dict()`).
Imports the planning records and store, never an agent.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import PlanStatus, TaskPlan
from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings

__all__ = ["app", "plan_table"]

app = typer.Typer(help="List and inspect the plans of multi-step requests.", add_completion=False)


def plan_table(plan: TaskPlan) -> Table:
    """A plan's tasks: round, route, status, description and the labels each created."""
    table = Table(
        title=f"Plan {plan.id}: {plan.status.value}, {plan.rounds} round(s)", box=box.SIMPLE_HEAD
    )
    for column in ("#", "round", "agent", "status", "task", "new labels"):
        table.add_column(
            column,
            justify="right" if column in ("#", "round") else "left",
            no_wrap=column in ("#", "round", "agent"),
            overflow="fold",
        )
    for number, task in enumerate(plan.tasks, start=1):
        status = task.status.value + (f" ({task.error})" if task.error else "")
        table.add_row(
            str(number),
            str(task.round),
            escape(task.mission or "orchestrator"),
            escape(status),
            escape(task.description),
            escape(", ".join(task.new_labels)),
        )
    return table


@app.command("list")
@handle_errors
def list_plans(
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many plans to list.")] = 20,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Only this session's plans.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plans as JSON.")] = False,
) -> None:
    """List recent plans, newest first."""
    plans = TaskStore(load_settings()).list(max(1, limit), session_id=session)
    if as_json:
        typer.echo(json.dumps([p.to_dict() for p in plans], indent=2))
        return
    console = Console()
    if not plans:
        console.print("No plans yet: multi-step requests (compare, compute then plot) make one.")
        return
    # The id already says when the plan was made (pYYYYMMDDhhmmss-...); light borders and
    # no separate time column keep the request readable in an 80-column terminal.
    table = Table(title="Plans", box=box.SIMPLE_HEAD)
    for column in ("id", "status", "rounds", "tasks"):
        table.add_column(column, no_wrap=True)
    table.add_column("request", overflow="fold")
    for plan in plans:
        table.add_row(
            plan.id,
            plan.status.value,
            str(plan.rounds),
            str(len(plan.tasks)),
            escape(plan.request if len(plan.request) <= 120 else plan.request[:119] + "…"),
        )
    console.print(table)
    console.print("Details: `xhelio plan show ID`.")
    for plan in plans:
        if plan.status is PlanStatus.INTERRUPTED:
            console.print(
                f"Plan {plan.id} was interrupted (its process ended); resume it with "
                f"`xhelio chat --session {plan.session_id}`, then `resume`.",
                highlight=False,
            )


@app.command("show")
@handle_errors
def show_plan(
    plan_id: Annotated[str, typer.Argument(help="Plan id (see `xhelio plan list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Show one plan: its request, decision, tasks by round, criteria and summary."""
    plan = TaskStore(load_settings()).load(plan_id)
    if as_json:
        typer.echo(json.dumps(plan.to_dict(), indent=2))
        return
    console = Console()
    console.print(f"[bold]Request:[/] {escape(plan.request)}", highlight=False)
    console.print(f"Session {plan.session_id}, planner {plan.planner or '?'}", highlight=False)
    if plan.time_range:
        console.print(f"Time range: {escape(plan.time_range)}", highlight=False)
    if plan.decision:
        console.print(
            f"Decision: {escape(str(plan.decision.get('rationale', '')))} "
            f"(confidence {plan.decision.get('confidence')})",
            highlight=False,
        )
    console.print(plan_table(plan))
    for criterion in plan.criteria:
        mark = "[green]met[/]" if criterion.met else "[red]not met[/]"
        console.print(f"{mark} {escape(criterion.criterion)}: {escape(criterion.evidence)}")
    if plan.summary:
        console.print(escape(plan.summary), highlight=False)
