"""Which bindings are active together, screen by screen, for the keymap check
(``config.keymap``): a screen's own, those of the widgets it holds, and the App's."""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType
from textual.dom import DOMNode

from tui_app.config.keymap import Scope


def bindings_of(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(id, keys) of each binding that has an id: only those can be remapped."""
    return [(b.id, b.key) for b in bindings if isinstance(b, Binding) and b.id]


def keymap_scopes(app_bindings: Iterable[BindingType]) -> dict[str, Scope]:
    """Screens and what they hold. Imported only when a keymap is set: the builder's module
    brings pydantic, which the list's first frame does not wait for otherwise."""
    from tui_app.shell.screens.builder_screen import BuilderScreen
    from tui_app.shell.screens.command_screen import CommandScreen
    from tui_app.shell.screens.confirm_screen import ConfirmScreen
    from tui_app.shell.screens.describe_screen import DescribeScreen
    from tui_app.shell.screens.diff_screen import DiffScreen
    from tui_app.shell.screens.help_screen import HelpScreen
    from tui_app.shell.screens.jobs_screen import JobsScreen
    from tui_app.shell.screens.logs_screen import LogsScreen
    from tui_app.shell.screens.message_screen import MessageScreen
    from tui_app.shell.screens.metrics_screen import MetricsScreen
    from tui_app.shell.screens.param_edit_screen import ParamEditScreen
    from tui_app.shell.screens.picker_screen import PickerScreen
    from tui_app.shell.screens.presets_screen import PresetsScreen
    from tui_app.shell.screens.prompt_screen import PromptScreen
    from tui_app.shell.screens.search_screen import SearchHitList, SearchScreen
    from tui_app.shell.screens.stacks_screen import StacksScreen
    from tui_app.widgets.code_preview import CodePreview
    from tui_app.widgets.detail_scroll import DetailScroll
    from tui_app.widgets.job_table import JobTable
    from tui_app.widgets.log_view import LogView
    from tui_app.widgets.params_table import ParamsTable
    from tui_app.widgets.tag_picker import TagPicker
    from tui_app.widgets.trials_table import TrialsTable

    app = bindings_of(app_bindings)
    held: dict[str, tuple[type[DOMNode], ...]] = {
        "the job list": (JobsScreen, JobTable),
        "the logs": (LogsScreen, LogView),
        "describe": (DescribeScreen, DetailScroll, TrialsTable),
        "the metrics": (MetricsScreen, TagPicker),
        "a diff": (DiffScreen, DetailScroll),
        "the stacks": (StacksScreen, DetailScroll),
        "the log search": (SearchScreen, SearchHitList),
        "the builder": (BuilderScreen, CodePreview, ParamsTable),
        "help": (HelpScreen, DetailScroll),
        "the command line": (CommandScreen,),
        "a confirmation": (ConfirmScreen,),
        "a message": (MessageScreen,),
        "a picker": (PickerScreen,),
        "the presets": (PresetsScreen,),
        "a prompt": (PromptScreen,),
        "the parameter editor": (ParamEditScreen,),
    }
    return {
        where: [b for owner in owners for b in bindings_of(owner.BINDINGS)] + app
        for where, owners in held.items()
    }
