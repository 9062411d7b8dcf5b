"""ClusterControls: a form over the kit's options with Start, Stop, Restart and Scale buttons.

A view only: it calls the public API (``start_cluster``, ``current_session``, ``detect``, ``session.close()``,
``session.scale()``). Its fields come from the option specs (:mod:`.form`); GPU-only fields show in GPU
mode only and SLURM-only fields only when deploy="slurm" is chosen. Slow actions run in a background
thread with the buttons disabled, so the kernel stays free; widget state changes made from that thread
reach JupyterLab like any other.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

import gpu_dask_kit as kit
from gpu_dask_kit import ClusterOptions, ClusterSession, KitError

from .form import FieldSpec, button_disabled, field_value, form_fields, parse_form, visible_fields
from .markup import error_html, status_html

__all__ = ["ClusterControls"]

_LABEL = {"description_width": "150px"}
_SCALE_TIMEOUT = 120.0


def _field(spec: FieldSpec) -> widgets.Widget:
    # ipywidgets 8.1 drops `tooltip` on Text/Dropdown/Checkbox views that have a description, so the label
    # carries it too (as its title); the label's text is the option's name.
    label = f"<span title='{html.escape(spec.tooltip, quote=True)}'>{spec.name}</span>"
    common = dict(description=label, description_allow_html=True, tooltip=spec.tooltip, style=_LABEL, layout=widgets.Layout(width="360px"))
    if spec.widget == "choice":
        return widgets.Dropdown(options=list(spec.choices), value=spec.value, **common)
    if spec.widget == "flag":
        return widgets.Checkbox(value=spec.value, indent=True, **common)
    if spec.widget == "lines":
        return widgets.Textarea(value=spec.value, placeholder="one per line", continuous_update=True, rows=2, **common)
    return widgets.Text(value=spec.value, placeholder=spec.placeholder, continuous_update=True, **common)


class ClusterControls(widgets.VBox):
    """Form + buttons + status line for the kit's session.

    ``controls.session`` is the live session (the object ``start_cluster()`` / ``current_session()``
    return), ``controls.last_error`` the message on display. ``start()``, ``stop()``, ``restart()`` and
    ``scale()`` do what the buttons do; ``wait()`` blocks until the running action is done.
    """

    def __init__(self, session: ClusterSession | None = None, **kwargs: Any) -> None:
        self.session: ClusterSession | None = session if session is not None and session.is_alive() else kit.current_session()
        self.gpu_available = kit.detect().mode == "gpu"  # for which fields device="auto" shows
        self.last_error: str | None = None
        self._listeners: list[Callable[[ClusterSession | None], None]] = []
        self._worker: threading.Thread | None = None
        self._busy_lock = threading.Lock()
        self.fields = {spec.name: _field(spec) for spec in form_fields(self._base_options())}
        for name in ("device", "deploy"):
            self.fields[name].observe(lambda _change: self._show_fields(), names="value")
        self._show_fields()
        self.start_button = widgets.Button(
            description="Start", button_style="success", icon="play", tooltip="Start a cluster with these options (reuses the running one if nothing changed)"
        )
        self.stop_button = widgets.Button(
            description="Stop", button_style="danger", icon="stop", tooltip="Stop the cluster: scheduler and worker processes exit"
        )
        self.restart_button = widgets.Button(
            description="Restart",
            button_style="warning",
            icon="refresh",
            tooltip="Stop the cluster and start a fresh one with these options (frees all worker and GPU memory)",
        )
        self.scale_button = widgets.Button(description="Scale", icon="arrows-v", tooltip="Change the number of workers of the running cluster to n_workers")
        for button, action in (
            (self.start_button, self.start),
            (self.stop_button, self.stop),
            (self.restart_button, self.restart),
            (self.scale_button, self.scale),
        ):
            button.on_click(lambda _b, act=action: act())
        self.status = widgets.HTML()
        self.error = widgets.HTML()
        buttons = widgets.HBox([self.start_button, self.stop_button, self.restart_button, self.scale_button])
        title = widgets.HTML("<b>gpu-dask-kit cluster</b>")
        super().__init__([title, *self.fields.values(), buttons, self.status, self.error], **kwargs)
        self._show_state()

    # -- public ----------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        worker = self._worker  # the action's own thread does not count (it updates the view as it ends)
        return worker is not None and worker.is_alive() and worker is not threading.current_thread()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running action; True when none is running any more."""
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout)
        return not self.busy

    def values(self) -> dict[str, Any]:
        """The form's raw values, keyed by option name."""
        return {name: field.value for name, field in self.fields.items()}

    def visible(self) -> tuple[str, ...]:
        """The fields shown for the chosen device and deploy (the others are not passed on Start)."""
        return visible_fields(self.fields["device"].value, self.fields["deploy"].value, self.gpu_available)

    def on_session_change(self, callback: Callable[[ClusterSession | None], None]) -> None:
        """Call ``callback(session)`` after an action of this widget changed the session (None: stopped)."""
        self._listeners.append(callback)

    def start(self) -> None:
        """Check the form, then start (or reuse) the cluster in the background."""
        kwargs = self._checked_form()
        if kwargs is not None:
            self._run("Starting the cluster", lambda: kit.start_cluster(verbose=False, **kwargs))

    def restart(self) -> None:
        """Check the form, close the running cluster, and start a fresh one in the background."""
        kwargs = self._checked_form()
        if kwargs is None:
            return

        def restart() -> ClusterSession:
            if self.session is not None:
                self.session.close()
            return kit.start_cluster(verbose=False, **kwargs)

        self._run("Restarting the cluster", restart)

    def stop(self) -> None:
        """Close the session in the background; its processes are gone when this finishes."""
        session = self.session

        def stop() -> None:
            if session is not None:
                session.close()
            return None

        self._run("Stopping the cluster", stop)

    def scale(self) -> None:
        """Scale the running cluster to the form's n_workers and wait until the workers are there."""
        session, text = self.session, str(self.fields["n_workers"].value).strip()
        if session is None or session.cluster is None:
            return self._set_error("Scale needs a cluster started by the kit (not a connection to an existing scheduler).")
        try:
            n = int(parse_form({"n_workers": text}, session.options).get("n_workers") or 0)
        except KitError as exc:
            return self._set_error(str(exc))
        if n < 1:
            return self._set_error("Type the number of workers to scale to in n_workers, then press Scale.")

        def scale() -> ClusterSession:
            return session.scale(n, timeout=_SCALE_TIMEOUT)  # checks n, waits, updates the registry

        self._run(f"Scaling to {n} worker(s)", scale)

    def refresh(self, session: ClusterSession | None = None) -> None:
        """Reflect ``session`` (default: ``current_session()``), e.g. one started from code."""
        if self.busy:
            return
        session = session if session is not None and session.is_alive() else kit.current_session()
        if session is not self.session:
            self.session = session
            if session is not None:
                self._fill_form(session.options)
        self._show_state()

    # -- internals -------------------------------------------------------------------------------------
    def _base_options(self) -> ClusterOptions:
        return self.session.options if self.session is not None else ClusterOptions.from_config()

    def _fill_form(self, options: ClusterOptions) -> None:
        for name, field in self.fields.items():
            field.value = field_value(name, getattr(options, name))

    def _show_fields(self) -> None:
        shown = set(self.visible())
        for name, field in self.fields.items():
            field.layout.display = None if name in shown else "none"

    def _checked_form(self) -> dict[str, Any] | None:
        try:
            kwargs = parse_form(self.values(), self.session.options if self.session is not None else None, self.visible())
        except KitError as exc:
            self._set_error(str(exc))
            return None
        return kwargs

    def _set_error(self, message: str | None) -> None:
        self.last_error = message
        self.error.value = error_html(message)

    def _run(self, what: str, action: Callable[[], ClusterSession | None]) -> None:
        with self._busy_lock:
            if self.busy:
                return self._set_error("Busy: wait until the current action has finished.")
            self._set_error(None)
            self._set_buttons(running=False, busy=True)
            self.status.value = status_html(state="busy", message=what)
            self._worker = threading.Thread(target=self._perform, args=(action,), name="gpu-dask-kit-controls", daemon=True)
            self._worker.start()

    def _perform(self, action: Callable[[], ClusterSession | None]) -> None:
        before = self.session
        try:
            result = action()
            self.session = result if result is not None and result.is_alive() else None
        except Exception as exc:  # shown in the widget, word for word; never swallowed
            self.session = kit.current_session()
            self._set_error(str(exc) if isinstance(exc, KitError) else f"{type(exc).__name__}: {exc}")
        try:
            if self.session is not before or self.session is None:
                for callback in list(self._listeners):
                    callback(self.session)
        except Exception as exc:
            self._set_error(f"{type(exc).__name__}: {exc}")
        finally:
            self._show_state()

    def _set_buttons(self, running: bool, busy: bool) -> None:
        can_scale = self.session is not None and self.session.cluster is not None
        for name, disabled in button_disabled(running, busy, can_scale).items():
            getattr(self, f"{name}_button").disabled = disabled

    def _show_state(self) -> None:
        session = self.session
        running = session is not None and session.is_alive()
        if session is not None and running:
            try:
                self.status.value = status_html(
                    state="running", mode=session.mode, n_workers=session.n_workers, dashboard_link=session.dashboard_link, reason=session.reason
                )
            except Exception as exc:  # the scheduler went away between the check and the call
                running = False
                self._set_error(f"{type(exc).__name__}: {exc}")
        if not running:
            self.session = None
            self.status.value = status_html(state="stopped")
        self._set_buttons(running=running, busy=self.busy)
