#!/bin/sh
# experiments/hicsfl: runs the HiCS-FL comparison in this process (no Temporal needed), as three
# sweeps (baselines.yaml, clustering.yaml, variants.yaml), and prints the summaries of README.md from their
# Parquet tables (experiments/sweeps.sh). Usage, from anywhere:
#   experiments/hicsfl/run.sh
set -eu
cd "$(dirname "$0")/../.."
exec experiments/sweeps.sh experiments/hicsfl speed share cost entropy smooth -- \
	experiments/hicsfl/baselines.yaml experiments/hicsfl/clustering.yaml experiments/hicsfl/variants.yaml
