# The project's two commands: `make run` (the tour) and `make test` (everything CI runs).
# Both first make sure an OpenCL platform exists (installing PoCL when missing).

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: setup run test fmt lint docs package unit examples dist bench

setup:
	@bash scripts/setup.sh

run: setup
	$(CARGO) run --release --example tour

test: setup fmt lint docs package unit examples dist

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Every public item documented, every intra-doc link resolved. Only our crates
# (--no-deps): a few seconds once the dependencies are checked.
docs:
	RUSTDOCFLAGS="-D missing-docs -D rustdoc::broken-intra-doc-links" $(CARGO) doc --workspace --no-deps

# The four crates as they would be published, in dependency order (clc, macros, runtime,
# the facade): each one's path dependencies resolve to the packages made before it.
# No build (--no-verify: `unit` builds and tests the same sources); --allow-dirty so that
# it checks the working tree, not the last commit.
package:
	$(CARGO) package --workspace --no-verify --allow-dirty

# Unit, integration and doc tests of every crate (the doc examples run on the default
# device like the rest), and the integration tests twice more, since the default,
# `Dispatch::Auto`, flushes inline on a CPU device such as PoCL: with every `eval()`
# handed to the dispatch thread (and taken back by the next read where it has not
# started), and with the GPUs' default, handed over after a pause; the compile-fail UI
# tests run no flush and are skipped there.
# The handed-over run comes first, in two processes at once (scripts/test-shards.sh): a
# first run is mostly program builds, which PoCL does one at a time per process; the
# later runs load the programs from the caches on disk. (trybuild builds the UI cases and
# their dependencies in a project of its own, in the default profile, whose debug info
# nothing reads: `CARGO_PROFILE_DEV_DEBUG=false` leaves it out; the test profile, which
# everything else builds with, sets its own.)
unit:
	$(CARGO) test --workspace --no-run
	LAZYCL_DISPATCH=background bash scripts/test-shards.sh it --skip ui_
	CARGO_PROFILE_DEV_DEBUG=false $(CARGO) test --workspace
	LAZYCL_DISPATCH=after-pause bash scripts/test-shards.sh it --skip ui_

examples:
	bash scripts/run-examples.sh

# Ranks over MPI (feature `mpi`): installs Open MPI when missing, then the two-rank checks
# under mpirun (scripts/check-dist.sh).
dist:
	bash scripts/check-dist.sh

bench: setup
	$(CARGO) bench --bench launch
