"""Toasts that belong to the screen that raised them, and go when it is dismissed.

Textual's notifications are the App's: a "Saved the view" raised in the logs stayed on the job
list for seconds after ``esc``, over a screen it says nothing about. Textual (8.x) has no
screen-scoped notifications, so a screen that mixes this in keeps the toasts it raises with
``self.notify`` and drops them when it leaves the stack. Toasts raised through the App
(``self.app.notify``, ``self.shell.job_submitted``) stay App-wide: "Submitted X" is raised from the
builder but is about the list the user lands on.
"""

from __future__ import annotations

from textual import events, on
from textual.notifications import Notification, Notify, SeverityLevel
from textual.widget import Widget


class ScreenToasts(Widget):
    """Mix in after ``Screen`` (``class LogsScreen(Screen[None], ScreenToasts)``).

    After, not before: Textual takes a widget's CSS type names along its first base only, so
    with this first the screen lost ``Screen``'s rules (its background among them). It was
    transparent, and each frame of it rendered the whole screen beneath as well: the job list,
    behind a flooding log. ``notify`` still comes from here (``Screen`` does not define it).
    """

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """As ``Widget.notify`` (thread-safe too), remembering the toast as this screen's."""
        app = self.app
        toast = Notification(
            message,
            title,
            severity,
            app.NOTIFICATION_TIMEOUT if timeout is None else timeout,
            markup=markup,
        )
        self._toasts().append(toast)
        app.post_message(Notify(toast))

    def _toasts(self) -> list[Notification]:
        toasts: list[Notification] | None = self.__dict__.get("_screen_toasts")
        if toasts is None:
            toasts = self.__dict__["_screen_toasts"] = []
        return toasts

    def drop_toasts(self) -> None:
        """Take down every toast this screen raised that is still up."""
        toasts = self._toasts()
        if not toasts:
            return
        app = self.app
        for toast in toasts:
            # No public way to withdraw one notification in Textual 8: _unnotify is what a
            # click on a toast calls, and it ignores one that has already expired.
            app._unnotify(toast, refresh=False)
        toasts.clear()
        app._refresh_notifications()

    @on(events.ScreenSuspend)
    def _drop_when_popped(self) -> None:
        # Suspended under a dialog it stays; popped (installed screens are not unmounted: the
        # builder) its toasts go.
        me: object = self
        if me not in self.app.screen_stack:
            self.drop_toasts()

    @on(events.Unmount)
    def _drop_when_removed(self) -> None:
        self.drop_toasts()
