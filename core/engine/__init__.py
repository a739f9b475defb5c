"""The update engine and its runs: the stages (refresh, discover, prune, propose, commit),
the from-scratch research, claim checks, review decisions and the commit, and the run
lifecycle (registration, workers, the job queue, the schedule, cost metering)."""
