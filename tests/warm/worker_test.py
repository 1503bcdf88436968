"""The warm worker with real processes: reused, never stale, never left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

from faults.faultkit import MARKER_VARIABLE, Fault, assert_clean

from .warmkit import WarmProject, wait_until, warm_project


def test_one_worker_serves_two_hooks_and_two_commits(project: WarmProject):
    for _ in range(2):
        assert project.overfit().code == 0
        assert project.doctest().code == 0
    seen = project.seen()
    assert [entry["what"] for entry in seen] == ["overfit", "doctest"] * 2
    (worker,) = project.warm_pids()
    assert {entry["ppid"] for entry in seen} == {worker}
    assert len({entry["pid"] for entry in seen}) == 4  # a fresh child per job
    status = project.worker("status")
    assert f"worker {worker}: {project.root}" in status
    assert "4 job(s) run" in status


def test_a_forked_job_sees_what_a_fresh_interpreter_sees(project: WarmProject):
    cold = project.overfit(env={"MLSMOKE_WORKER": "0"})
    assert cold.code == 0 and not project.warm_pids(), cold.output
    assert project.overfit().code == 0 and project.overfit().code == 0
    fresh, first, second = project.seen()
    assert first["ppid"] == second["ppid"] != fresh["ppid"]
    for forked in (first, second):
        assert forked["pgid"] == forked["pid"]  # its own group, which the hook kills
        for same in ("argv", "cwd", "path", "main", "torch_seed", "torch_first"):
            assert forked[same] == fresh[same], same
        assert forked["random"] == fresh["random"]  # the gate's seed
        assert forked["cuda"] is False
    assert first["argv"] == ["-c"] and first["main"] == []
    assert len({entry["token"] for entry in (fresh, first, second)}) == 3


def test_unseeded_generators_start_afresh_in_each_job(project: WarmProject):
    assert project.doctest().code == 0 and project.doctest().code == 0
    first, second = project.seen()
    assert first["ppid"] == second["ppid"]
    # seeded from the system in each process, as at a fresh import
    assert first["random"] != second["random"] and first["numpy"] != second["numpy"]
    assert first["torch_first"] == second["torch_first"]  # torch's fixed default


def test_an_edited_project_module_is_seen_by_the_next_job(project: WarmProject):
    assert project.overfit().code == 0
    app = project.root / "app.py"
    app.write_text(app.read_text().replace("VALUE = 1", "VALUE = 2"))
    assert project.doctest().code == 0
    before, after = project.seen()
    assert before["ppid"] == after["ppid"]  # the same worker
    assert (before["value"], after["value"]) == (1, 2)


def test_a_worker_killed_between_jobs_is_replaced(project: WarmProject):
    assert project.overfit().code == 0
    (first,) = project.warm_pids()
    os.kill(first, signal.SIGKILL)
    assert wait_until(lambda: not project.warm_pids())
    assert project.overfit().code == 0
    (second,) = project.warm_pids()
    assert second != first
    assert [entry["ppid"] for entry in project.seen()] == [first, second]


def test_a_worker_killed_during_a_job_reruns_it_in_a_process_of_its_own(
    project: WarmProject,
):
    assert project.overfit().code == 0  # the worker is up
    _slow_gate(project, seconds=4)
    outcome = project.overfit(
        fault=Fault(signal.SIGKILL, reached="slow", delay=0.5, target="warm")
    )
    assert outcome.code == 0 and "PASS" in outcome.stdout, outcome.output
    assert "ended while it ran the job" in outcome.stderr
    assert "running it again in a process of its own" in outcome.stderr
    assert not project.others()
    last = project.seen()[-1]
    assert last["ppid"] != project.seen()[0]["ppid"]  # not forked by the dead worker


def test_a_changed_dist_info_retires_the_worker(tmp_path: Path):
    site = tmp_path / "site"
    (site / "tinydep-1.0.dist-info").mkdir(parents=True)
    (site / "tinydep-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n"
    )
    (site / "tinydep-1.0.dist-info" / "RECORD").write_text("tinydep.py,,\n")
    (site / "tinydep.py").write_text("VERSION = 1\n")
    project = warm_project(tmp_path)
    project.env["PYTHONPATH"] = str(site)
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"numpy"', '"numpy", "tinydep"'))
    try:
        assert project.overfit().code == 0
        (first,) = project.warm_pids()
        # pip's upgrade: a new dist-info directory, the module rewritten
        (site / "tinydep-1.0.dist-info").rename(site / "tinydep-1.1.dist-info")
        (site / "tinydep.py").write_text("VERSION = 2\n")
        assert project.overfit().code == 0
        assert wait_until(lambda: first not in project.warm_pids())
        (second,) = project.warm_pids()
        assert [entry["ppid"] for entry in project.seen()] == [first, second]
    finally:
        for pid in project.warm_pids():
            os.kill(pid, signal.SIGKILL)


def test_an_idle_worker_ends_itself(tmp_path: Path):
    project = warm_project(tmp_path, idle=1)
    assert project.overfit().code == 0
    assert project.warm_pids()
    assert wait_until(lambda: not project.warm_pids(), limit=15)
    assert not list(project.workers.glob("*.sock"))
    assert not project.others()


def test_a_stopped_worker_leaves_nothing(project: WarmProject):
    assert project.overfit().code == 0
    (worker,) = project.warm_pids()
    os.kill(worker, signal.SIGTERM)
    assert wait_until(lambda: not project.warm_pids())
    assert not list(project.workers.glob("*.sock"))
    assert project.overfit().code == 0  # a new one
    assert "stopped worker" in project.worker("stop")
    assert wait_until(lambda: not project.warm_pids())
    assert "no worker is running" in project.worker("status")


def _slow_gate(project: WarmProject, seconds: float = 300) -> None:
    """The gate's model starts a process, then takes ``seconds`` to build."""
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('model = "app:model"', 'model = "app:slow"')
    )
    with (project.root / "app.py").open("a") as app:
        app.write(
            "\n\ndef slow():\n    record('slow')\n"
            "    import subprocess, time\n"
            f"    with open(os.environ['{MARKER_VARIABLE}'], 'a') as marker:\n"
            "        marker.write('slow\\n')\n"
            "    subprocess.Popen(['sleep', '300'])\n"
            f"    time.sleep({seconds})\n"
            "    return torch.nn.Linear(4, 3)\n"
        )


def test_a_killed_worker_takes_its_running_job_along(project: WarmProject):
    assert project.overfit().code == 0
    _slow_gate(project)
    outcome = project.overfit(
        fault=Fault(signal.SIGKILL, reached="slow", delay=0.5, target="warm"), limit=15
    )
    assert "ended while it ran the job" in outcome.stderr, outcome.output
    assert outcome.code == -signal.SIGKILL  # the cold re-run hung at the test's limit
    assert not project.others()


def test_a_hook_killed_during_a_job_takes_the_job_along(project: WarmProject):
    assert project.overfit().code == 0
    _slow_gate(project)
    outcome = project.overfit(fault=Fault(signal.SIGKILL, reached="slow", delay=0.5))
    assert outcome.code == -signal.SIGKILL
    assert not outcome.processes, outcome.processes  # the job and its sleep
    (worker,) = project.warm_pids()
    assert "idle" in project.worker("status")


def test_two_projects_at_once_each_get_their_own_worker(tmp_path: Path):
    one, two = (warm_project(tmp_path / name) for name in ("one", "two"))
    two.tag = one.tag
    two.workers, two.env["MLSMOKE_WORKER_DIR"] = one.workers, str(one.workers)
    try:
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "mlsmoke", "overfit", "--no-cache"],
                cwd=project.root,
                env={**os.environ, **project.env, "MLSMOKE_FAULT_TAG": one.tag},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for project in (one, two)
        ]
        assert [run.wait(timeout=120) for run in runs] == [0, 0]
        workers = one.warm_pids()
        assert len(workers) == 2
        (seen_one,), (seen_two,) = one.seen(), two.seen()
        assert {seen_one["ppid"], seen_two["ppid"]} == set(workers)
        status = one.worker("status")
        assert str(one.root) in status and str(two.root) in status
    finally:
        for pid in one.warm_pids():
            os.kill(pid, signal.SIGKILL)


def test_turned_off_the_hooks_start_their_own_process(project: WarmProject):
    off = project.overfit(env={"MLSMOKE_WORKER": "0"})
    assert off.code == 0 and not project.warm_pids()
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "[tool.mlsmoke.overfit",
            "[tool.mlsmoke.worker]\nenabled = false\n\n" "[tool.mlsmoke.overfit",
        )
    )
    configured = project.doctest()
    assert configured.code == 0 and not project.warm_pids()
    assert_clean(off)
    assert_clean(configured)
    assert not list(project.workers.glob("*.sock"))
    ppids = {entry["ppid"] for entry in project.seen()}
    assert len(ppids) == 2  # each job's parent: its own hook
    assert "off (tool.mlsmoke.worker.enabled = false)" in project.worker("status")


def test_a_worker_whose_interpreter_went_away_ends(tmp_path: Path):
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    purelib = sysconfig.get_paths()["purelib"]  # this environment's torch
    site = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "_torch_here.pth").write_text(
        f"import site; site.addsitedir({purelib!r})\n"
    )
    project = warm_project(tmp_path)
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(sys.executable, str(python)))
    try:
        assert project.overfit().code == 0
        assert project.warm_pids()
        shutil.rmtree(venv)
        assert wait_until(lambda: not project.warm_pids(), limit=15)
        assert not project.others()
    finally:
        for pid in project.warm_pids():
            os.kill(pid, signal.SIGKILL)
