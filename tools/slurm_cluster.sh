#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, in a directory of its own, for running the workflow
# through `--profile profiles/slurm` for real (issue 54; tests/test_slurm.py, .ci/run).
#
#   tools/slurm_cluster.sh start  DIR   # start it (again: a no-op when it runs); prints the
#                                       # `export` lines its commands need (eval them)
#   tools/slurm_cluster.sh status DIR   # each daemon's pid and state, the node's state
#   tools/slurm_cluster.sh stop   DIR   # cancel its jobs, end its daemons, remove DIR
#
# This machine is the controller and the compute node, with the CPUs and memory `slurmd -C`
# reads here, in one partition (PARTITION below, the default). Its daemons: munged (its own key
# and socket), MariaDB (its own data folder, 127.0.0.1 only) behind slurmdbd, so that `sacct`
# lists the jobs (Slurm 22.05 has no accounting without slurmdbd, and slurmdbd stores only in
# MySQL/MariaDB), slurmctld and slurmd; proctrack/linuxproc and task/none (no cgroups needed).
# Jobs submitted by Snakemake's SLURM executor need DIR/bin first on PATH (the second export
# line): snakemake-executor-plugin-slurm-jobstep (0.6.1) runs each job's inner `srun` without
# SLURM_* variables, SLURM_CONF among them, so that srun would look for /etc/slurm/slurm.conf;
# DIR/bin/srun is srun with this cluster's SLURM_CONF. Every file is under DIR; each daemon is
# ended by its own pid file. Run as root (the daemons run as root). Needs Debian's slurm-wlm,
# slurmdbd, munge and mariadb-server.
set -euo pipefail

PARTITION=main
CLUSTER=samelda
PROG=$(basename "$0")

die() { echo "$PROG: $*" >&2; exit 2; }

usage() { die "usage: $PROG start|stop|status DIR"; }

# --- the cluster's directory: created by this script (a marker file says so), nothing else ---
owned() { [[ -f "$DIR/.slurm_cluster" ]]; }

check_dir_for_start() {
  if [[ -e "$DIR" ]] && ! owned; then
    [[ -d "$DIR" && -z "$(ls -A "$DIR")" ]] ||
      die "$DIR exists and was not made by $PROG; give a new directory"
  fi
  # a Unix socket's path is at most 107 bytes (munged's and MariaDB's sockets live under DIR)
  (( ${#DIR} <= 80 )) || die "$DIR is too long for the sockets under it (at most 80 characters)"
}

check_tools() {
  local t missing=()
  for t in munged mungekey mariadbd mariadb-install-db mariadb slurmdbd slurmctld slurmd \
           sacctmgr sinfo squeue scancel srun; do
    command -v "$t" > /dev/null || missing+=("$t")
  done
  (( ${#missing[@]} == 0 )) || die "not installed: ${missing[*]} (apt-get install" \
    "slurm-wlm slurmdbd munge mariadb-server)"
  (( EUID == 0 )) || die "run as root: the daemons run as root"
}

# --- daemons, each by its pid file ---
DAEMONS=(slurmd slurmctld slurmdbd mariadbd munged)   # the order they stop in

pid_of() { [[ -s "$DIR/run/$1.pid" ]] && cat "$DIR/run/$1.pid"; }

alive() {
  local pid
  pid=$(pid_of "$1") || return 1
  kill -0 "$pid" 2> /dev/null
}

wait_for() {  # wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, else fail naming WHAT
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" > /dev/null 2>&1; do
    if (( SECONDS >= deadline )); then
      echo "$PROG: $what did not happen within the time allowed; logs in $DIR/log" >&2
      tail -n 5 "$DIR"/log/*.log >&2 || true
      exit 1
    fi
    sleep 0.5
  done
}

end_daemon() {
  local name=$1 pid
  pid=$(pid_of "$name") || return 0
  if kill -0 "$pid" 2> /dev/null; then
    kill -TERM "$pid"
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2> /dev/null && (( SECONDS < deadline )); do sleep 0.2; done
    kill -0 "$pid" 2> /dev/null && kill -KILL "$pid"
  fi
  rm -f "$DIR/run/$name.pid"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- configuration ---
write_configs() {
  local node node_line
  node=$(hostname -s)
  # CPUs, sockets, cores, threads and RealMemory as slurmd reads them on this machine
  node_line=$(slurmd -C | head -n 1)
  [[ "$node_line" == "NodeName=$node "* ]] || die "slurmd -C gave '$node_line'"
  cat > "$DIR/etc/slurm.conf" <<EOF
# written by $PROG: a one-node cluster in $DIR
ClusterName=$CLUSTER
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# a job ended by the scheduler (scancel, its time limit) is killed 5 s after SIGTERM
KillWait=5
OverTimeLimit=0
InactiveLimit=0
MinJobAge=300
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# the munge socket for slurmdbd's connections (AuthInfo serves the others)
AccountingStoragePass=$DIR/munge/munge.socket
JobCompType=jobcomp/none
# sacct shows the comment Snakemake gives each job (its rule and wildcards)
AccountingStoreFlags=job_comment
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=$PARTITION Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  # slurmdbd reads slurmdbd.conf beside slurm.conf (SLURM_CONF); it must be 0600
  ( umask 077; cat > "$DIR/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$DIR/run/slurmdbd.pid
LogFile=$DIR/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
  )
}

# --- start ---
write_srun() {  # srun with this cluster's slurm.conf (see the top of this file)
  cat > "$DIR/bin/srun" <<EOF
#!/bin/sh
SLURM_CONF='$DIR/etc/slurm.conf' exec '$(command -v srun)' "\$@"
EOF
  chmod 755 "$DIR/bin/srun"
}

exports() {
  echo "export SLURM_CONF=$DIR/etc/slurm.conf"
  echo "export PATH=$DIR/bin:\$PATH"
}

start_munge() {
  mungekey --create --keyfile="$DIR/munge/munge.key" > /dev/null
  # --force: DIR may lie in a folder closed to others (pytest's tmp_path); every client is root
  munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
    --pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" \
    --seed-file="$DIR/munge/munged.seed"
  wait_for 20 "munged's start" alive munged
}

start_mariadb() {
  mariadb-install-db --no-defaults --datadir="$DIR/db" --user=root \
    --auth-root-authentication-method=socket --skip-test-db > "$DIR/log/mariadb-install.log" 2>&1
  # not a daemon by itself: started in the background, its pid file written by itself
  nohup mariadbd --no-defaults --datadir="$DIR/db" --user=root --bind-address=127.0.0.1 \
    --port="$DB_PORT" --socket="$DIR/db/mariadb.socket" --pid-file="$DIR/run/mariadbd.pid" \
    --log-error="$DIR/log/mariadb.log" --innodb-buffer-pool-size=64M < /dev/null \
    > /dev/null 2>&1 &
  wait_for 60 "MariaDB's start" mariadb --no-defaults --socket="$DIR/db/mariadb.socket" -e "SELECT 1"
  mariadb --no-defaults --socket="$DIR/db/mariadb.socket" -e \
    "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
     GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
}

start_slurm() {
  slurmdbd
  wait_for 60 "slurmdbd's start" sacctmgr -n list cluster
  sacctmgr -i add cluster "$CLUSTER" > /dev/null
  slurmctld
  wait_for 60 "slurmctld's start" scontrol ping
  slurmd
  wait_for 60 "the node's becoming idle" node_idle
}

node_idle() { [[ "$(sinfo -h -N -o %T)" == idle ]]; }

running() {
  local d
  for d in "${DAEMONS[@]}"; do alive "$d" || return 1; done
  node_idle
}

start() {
  check_dir_for_start
  check_tools
  export SLURM_CONF="$DIR/etc/slurm.conf"
  if owned && running; then
    exports
    return 0
  fi
  owned && stop_daemons   # a cluster half up (a daemon died): started afresh
  rm -rf "${DIR:?}"/*
  mkdir -p "$DIR"/{etc,bin,munge,db,state,spool,log,run}
  # munged wants its socket's folder open to all (its key stays 0600)
  chmod 755 "$DIR" "$DIR/munge"
  touch "$DIR/.slurm_cluster"
  # a start that fails ends what it started (the logs stay; `stop` removes DIR)
  trap 'stop_daemons' EXIT
  DB_PORT=$(free_port) DBD_PORT=$(free_port)
  DB_PASS=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  write_configs
  write_srun
  start_munge
  start_mariadb
  start_slurm
  trap - EXIT
  exports
}

# --- stop, status ---
stop_daemons() {
  export SLURM_CONF="$DIR/etc/slurm.conf"
  if alive slurmctld; then
    # the cluster's own jobs, then a few seconds for their steps to end
    scancel --full --user=root > /dev/null 2>&1 || true
    local deadline=$((SECONDS + 15))
    while [[ -n "$(squeue -h -o %i 2> /dev/null)" ]] && (( SECONDS < deadline )); do
      sleep 0.5
    done
  fi
  local d
  for d in "${DAEMONS[@]}"; do end_daemon "$d"; done
}

stop() {
  [[ -e "$DIR" ]] || return 0
  owned || die "$DIR was not made by $PROG; not touching it"
  stop_daemons
  rm -rf "$DIR"
}

status() {
  owned || die "no cluster in $DIR (not made by $PROG)"
  export SLURM_CONF="$DIR/etc/slurm.conf"
  local d state=0
  for d in "${DAEMONS[@]}"; do
    if alive "$d"; then echo "$d: running, pid $(pid_of "$d")"; else echo "$d: not running"; state=1; fi
  done
  if alive slurmctld; then
    echo "node: $(sinfo -h -N -o '%N %T %c CPUs %m MB')"
  fi
  return $state
}

if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then  # the comment above, nothing run
  echo "usage: tools/slurm_cluster.sh start|stop|status DIR"
  awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"
  exit 0
fi
[[ $# -eq 2 ]] || usage
DIR=$(realpath -m -- "$2")
case "$1" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
