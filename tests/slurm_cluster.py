"""A private single-node Slurm for tests (what it relies on: docs/proofs.md, "A private Slurm for the tests"): own
slurm.conf, ports and state directory, started as root and stopped by pid file. Never touches a Slurm already
running or configured here.

The config must sit at the default path /etc/slurm/slurm.conf: snakemake-executor-plugin-slurm-jobstep (0.6) removes
SLURM_CONF from the environment of its nested srun, which then fails with "Could not establish a configuration
source" on any cluster whose slurm.conf lives elsewhere. The test writes the file there only if none exists, and
removes it afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from support import RUN_TIMEOUT, free_port

PACKAGES = ("slurm-wlm", "munge")
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")

POLL_SECONDS = 2


def snakemake_polling_every(seconds: int = POLL_SECONDS) -> tuple[str, ...]:
    """The command that starts Snakemake with the Slurm executor's status polls every ``seconds``. The plugin
    (snakemake-executor-plugin-slurm 2.8) waits 10 s longer after each poll that finds no job finished, up to 180 s,
    which spares a real cluster's controller; on this private one-node cluster, whose jobs take ~10 s each, the
    test's run found a stage's jobs finished 20-23 s after they had (four stages in a row: preprocess, tune, the
    tuned estimate and the inference). Only the wait between polls changes: the jobs, their submission, the status
    command and the results are the plugin's own."""
    code = (
        "import snakemake_executor_plugin_slurm as slurm;"
        "assert isinstance(slurm.Executor.next_seconds_between_status_checks, property);"
        f"slurm.Executor.next_seconds_between_status_checks = property(lambda self: {int(seconds)}, lambda s, v: None);"
        "from snakemake.cli import main;"
        "main()"
    )
    return (sys.executable, "-c", code)


def unavailable_reason() -> str | None:
    """Why a real Slurm cannot be run here, or None."""
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root to start munged, slurmctld and slurmd"
    if not Path("/etc/debian_version").exists():
        return "installs Slurm from Debian's packages; this is not Debian"
    if shutil.which("slurmctld") is None:
        if shutil.which("apt-get") is None:
            return "slurm-wlm is not installed and apt-get is missing"
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *PACKAGES]):
            res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)
            if res.returncode != 0:
                return f"could not install {' '.join(PACKAGES)}: {res.stderr.strip().splitlines()[-1:]}"
    if subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True).returncode == 0:
        return "a slurmctld is already running on this machine; not touching it"
    if SYSTEM_CONF.exists():
        return f"{SYSTEM_CONF} exists (a Slurm is configured here); not touching it"
    return None


class LocalSlurm:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.host = socket.gethostname().split(".")[0]
        self.conf = SYSTEM_CONF
        self.pids: list[Path] = []

    def _write_conf(self) -> None:
        for sub in ("state", "spool", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        mem_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        r = self.root
        self.conf.write_text(f"""ClusterName=dpcosttest
SlurmctldHost={self.host}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MinJobAge=600
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
NodeName={self.host} CPUs={os.cpu_count()} RealMemory={mem_mb - 1024} State=UNKNOWN
PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""")

    @property
    def env(self) -> dict:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def __enter__(self):
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        self._write_conf()
        if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
            Path("/run/munge").mkdir(mode=0o755, parents=True, exist_ok=True)  # absent in a fresh container
            subprocess.run(["munged", "--force", f"--pid-file={self.root}/munged.pid"], check=True)
            self.pids.append(self.root / "munged.pid")
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True, env=self.env)
        self.pids.append(self.root / "slurmctld.pid")
        subprocess.run(["slurmd", "-f", str(self.conf)], check=True, env=self.env)
        self.pids.append(self.root / "slurmd.pid")
        deadline = time.time() + 600  # seconds on a quiet machine; many more on a busy one
        while time.time() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env).stdout
            if out.strip() in ("idle", "mixed"):
                return self
            time.sleep(1)
        self.__exit__()
        raise RuntimeError(f"the test Slurm did not come up; see {self.root}/log")

    def __exit__(self, *exc):
        for pid_file in reversed(self.pids):
            try:
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        time.sleep(1)
        SYSTEM_CONF.unlink(missing_ok=True)
