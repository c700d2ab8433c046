# reqgate: `make run` starts the whole system with embedded defaults; `make test` installs what the tests need
# (make deps) and runs every test.
GO      ?= go
BIN     := bin/reqgate
FUZZTIME ?= 5s
# The release this tree builds: stamped into the binary (reqgate version, reqgate_build_info) and the image, and
# the chart's appVersion (a test holds charts/reqgate/Chart.yaml and the Dockerfile to it).
VERSION := $(shell cat VERSION)
LDFLAGS  = -X main.version=$(VERSION) -X main.vcsRevision=$(shell git rev-parse HEAD 2>/dev/null) \
  -X main.vcsTime=$(shell git log -1 --format=%cI 2>/dev/null) \
  -X main.vcsModified=$(shell test -z "$$(git status --porcelain 2>/dev/null)" && echo false || echo true)
IMAGE   ?= ghcr.io/reqgate/reqgate

.PHONY: all build run deps test check unit fuzz chart bench loadtest lint clean image

all: build

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/reqgate

# The container image, tagged with VERSION (the tag the chart deploys by default), with the revision stamped in.
image:
	docker build --build-arg VERSION=$(VERSION) --build-arg REVISION=$$(git rev-parse HEAD) \
	  --build-arg CREATED=$$(git log -1 --format=%cI) -t $(IMAGE):$(VERSION) .

run: build
	./$(BIN) serve

# redis-server, redis-sentinel and PostgreSQL's server programs for the tests: installed with apt-get when missing and run as
# root; otherwise the exact command to run is printed and the target fails.
# promtool (the metrics test of cmd/reqgate and charts/test.sh run it) is unpacked here from Debian's prometheus
# package (downloaded, not installed: see .ci/promtool), so that fetching it is not counted against a test's time
# limit. helm is the one test tool built from source (by charts/test.sh: 3.5 CPU-minutes from a cold module cache).
deps:
	@bash .ci/deps
	@bash .ci/promtool >/dev/null

test: deps lint unit fuzz chart

# The edit-test loop: lint, then every test that needs no server (-short skips those that start Redis,
# PostgreSQL, Chromium or the built binary; make test and CI never pass -short, so they run them all).
check: lint
	$(GO) test -short -count=1 ./...

# Allocation counts are checked once more without the race detector, under which sync.Pool drops items at random
# (so pooled state is made again) and those tests skip themselves; so is the cache's memory, which would take a
# minute to fill under it.
unit:
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocs$$|Allocations$$|WithinBudget$$' ./cache/... ./gateway/... ./ratelimit/... ./translate/...

# A short seeded run of every fuzz target (the seed corpus also runs in `unit`). A failing input is saved under
# the package's testdata/fuzz and fails the run; a failure that leaves no input behind (the fuzzing engine's own
# "process hung or terminated unexpectedly" on a loaded machine) is shown and retried once.
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; \
	    dir=$$($(GO) list -f '{{.Dir}}' $$pkg)/testdata/fuzz/$$t; \
	    before=$$(ls $$dir 2>/dev/null | wc -l); \
	    if ! $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg >$$log 2>&1; then \
	      cat $$log; \
	      if [ "$$(ls $$dir 2>/dev/null | wc -l)" != "$$before" ]; then echo "$$t: failing input saved in $$dir"; exit 1; fi; \
	      echo "$$t: failed without a failing input; retrying once"; \
	      $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	    fi; \
	  done; \
	done

# helm lint and helm template of charts/reqgate, with helm built from the Go module proxy (cached); promtool check
# rules and test rules of its alerts (Debian's promtool, .ci/promtool).
chart:
	bash charts/test.sh

# Go benchmarks of every package; among them cache's BenchmarkCacheMemory, the heap of a full default cache per
# byte of cache.max_bytes (heap/max_bytes), which fills 256 MiB and takes 15-40 s.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./...

# wrk against a bare fasthttp ceiling (unpinned, also one busy for BUSY a request), nginx with proxy_cache,
# Varnish, the gateway (hit, JSON, Redis policy, miss) and the core, in alternating rounds of one run, then
# open-loop latency runs (gateway/loadtest/openloop), in two CPU layouts (servers pinned to one CPU and wrk to the
# other, then nothing pinned); about 14 minutes. Figures in docs/performance.md. Knobs: LAYOUT=pinned|unpinned|both,
# PAIRS=5, OLPAIRS=2, DUR=8s, EVENTS=1, BUSY=6us. Needs wrk, nginx, varnish and redis-server, which it installs
# with apt-get when run as root.
loadtest:
	./gateway/loadtest/loadtest.sh $(or $(DUR),8s)

# staticcheck, pinned, built once from the Go module proxy into the user cache (from an empty directory, so the
# main module's go.mod is never touched).
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/reqgate/staticcheck-$(STATICCHECK_VERSION)/staticcheck

$(STATICCHECK):
	@echo "building staticcheck $(STATICCHECK_VERSION) (first run only)"
	@d=$$(mktemp -d); cd $$d && GOWORK=off GOFLAGS=-buildvcs=false GOBIN=$(dir $(STATICCHECK)) \
	  $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); rc=$$?; rm -rf $$d; exit $$rc

lint: $(STATICCHECK)
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@out=$$(gofmt -l $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@test "$$($(GO) list -m -f '{{.Version}}' modernc.org/libc)" = v1.77.1 || \
	  { echo "modernc.org/libc must stay at v1.77.1 (the version modernc.org/sqlite v1.60.1 names)"; exit 1; }

clean:
	rm -rf bin data
