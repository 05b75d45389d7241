# Two entry points (README): `make certify` and `make test`. Both set up .venv first and are
# idempotent: the install step reruns only when pyproject.toml changes.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CERTIFY_STAMP := $(VENV)/.installed-certify
# Allure 3 (npm `allure`, runs on Node: no JVM start per report); its allure2 plugin draws the
# classic report with categories, environment, executor and the history trend.
ALLURE_VERSION := 3.18.0
ALLURE := .cache/allure3/node_modules/allure/cli.js
# Spark 4.1 is the version both Delta and Iceberg publish for; pyspark is pinned in pyproject.toml.
ICEBERG_JAR := .cache/jars/iceberg-spark-runtime-4.1_2.13-1.11.0.jar
ICEBERG_AWS_JAR := .cache/jars/iceberg-aws-bundle-1.11.0.jar
# Iceberg's REST Compatibility Kit and its run-time classpath (tests/rck/pom.xml), for tests/test_iceberg_rck.py.
RCK_JARS := .cache/jars/rck/.complete
# Delta Kernel (the delta-kernel target): its jars from Maven Central per the pom, and lakecert's driver
# compiled against them with javac (conformance/adapters/delta_kernel/).
KERNEL_DIR := conformance/adapters/delta_kernel/java
KERNEL_JARS := .cache/jars/kernel/.fetched
KERNEL_DRIVER := .cache/kernel-driver/lakecert/kernel/Driver.class
# Project Nessie's server (the nessie target): one self-contained Quarkus runner jar; runs on Java >= 21.
NESSIE_VERSION := 0.99.0
NESSIE_JAR := .cache/jars/nessie-quarkus-$(NESSIE_VERSION)-runner.jar
# Wheels of the core dependencies and the build requirements: the packaging test builds and installs
# lakecert in a fresh venv from these alone (no PyPI at test time).
WHEELS := .cache/wheels/.complete
# UC's Java client (in the Kernel jars) driven by a small program of the test suite (tests/test_uc_java_client.py).
UC_JAVA_PROBE := .cache/uc-java-probe/lakecert/ucjava/Probe.class
# UC's Python SDK in a venv of its own (its pins must not cap .venv), for tests/test_uc_python_sdk.py.
UC_SDK_VENV := .cache/venvs/uc-sdk
UC_SDK := $(UC_SDK_VENV)/.installed
# delta-spark for Spark 4.1 (the delta-spark target) and lakecert's held LogStore, compiled with javac
# against it and PySpark's own jars (conformance/adapters/delta_spark/java/).
DELTA_SPARK_JAR := .cache/jars/delta-spark_4.1_2.13-4.4.0.jar
DELTA_STORAGE_JAR := .cache/jars/delta-storage-4.4.0.jar
DELTA_LOGSTORE_DIR := conformance/adapters/delta_spark/java
DELTA_LOGSTORE_JAR := .cache/jars/lakecert-delta-logstore.jar
OUT ?= reports/certify-$(shell date +%Y%m%d-%H%M%S)

.PHONY: setup certify test lint selftest bench bench-spark bench-nessie bench-kernel-engine observe-delta docs clean rck-jars uc-sdk mutation

setup: $(STAMP) $(ALLURE) $(ICEBERG_JAR) $(ICEBERG_AWS_JAR) $(RCK_JARS) $(KERNEL_DRIVER) $(DELTA_LOGSTORE_JAR) $(UC_JAVA_PROBE) $(UC_SDK) $(NESSIE_JAR) $(WHEELS)

# Jars for Spark, fetched once from Maven Central into the checkout (no resolver at run time).
$(ICEBERG_JAR):
	mkdir -p .cache/jars
	mvn -q dependency:copy -Dartifact=org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0 -DoutputDirectory=.cache/jars
	test -f $@

# S3FileIO with the AWS SDK, for Spark writing tables on S3 (moto in the tests).
$(ICEBERG_AWS_JAR):
	mkdir -p .cache/jars
	mvn -q dependency:copy -Dartifact=org.apache.iceberg:iceberg-aws-bundle:1.11.0 -DoutputDirectory=.cache/jars
	test -f $@

# Nessie's runner jar (classifier `runner`, ~245 MB), for the nessie target and tests/test_nessie*.py.
$(NESSIE_JAR):
	mkdir -p .cache/jars
	mvn -q dependency:copy -Dartifact=org.projectnessie.nessie:nessie-quarkus:$(NESSIE_VERSION):jar:runner -DoutputDirectory=.cache/jars
	test -f $@

$(DELTA_SPARK_JAR):
	mkdir -p .cache/jars
	mvn -q dependency:copy -Dartifact=io.delta:delta-spark_4.1_2.13:4.4.0 -DoutputDirectory=.cache/jars
	test -f $@

$(DELTA_STORAGE_JAR):
	mkdir -p .cache/jars
	mvn -q dependency:copy -Dartifact=io.delta:delta-storage:4.4.0 -DoutputDirectory=.cache/jars
	test -f $@

$(DELTA_LOGSTORE_JAR): $(STAMP) $(DELTA_SPARK_JAR) $(DELTA_STORAGE_JAR) $(wildcard $(DELTA_LOGSTORE_DIR)/src/lakecert/delta/*.java)
	rm -rf .cache/delta-logstore && mkdir -p .cache/delta-logstore
	javac -nowarn --release 17 -d .cache/delta-logstore \
		-cp "$$($(BIN)/python -c 'import pyspark, os; print(os.path.dirname(pyspark.__file__))')/jars/*:$(DELTA_STORAGE_JAR)" \
		$(DELTA_LOGSTORE_DIR)/src/lakecert/delta/*.java
	jar cf $@ -C .cache/delta-logstore .
	test -f $@

# Every jar the pom lists, with their run-time dependencies; refetched when the pom changes.
rck-jars: $(RCK_JARS)
$(RCK_JARS): tests/rck/pom.xml
	rm -rf .cache/jars/rck && mkdir -p .cache/jars/rck
	mvn -q -B -f tests/rck/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.cache/jars/rck
	ls .cache/jars/rck/junit-platform-console-standalone-*.jar .cache/jars/rck/iceberg-open-api-*-tests.jar
	touch $@

$(KERNEL_JARS): $(KERNEL_DIR)/pom.xml
	rm -rf .cache/jars/kernel && mkdir -p .cache/jars/kernel
	mvn -q -f $(KERNEL_DIR)/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.cache/jars/kernel
	test -f .cache/jars/kernel/delta-kernel-api-4.4.0.jar && touch $@

$(KERNEL_DRIVER): $(KERNEL_JARS) $(wildcard $(KERNEL_DIR)/src/lakecert/kernel/*.java)
	rm -rf .cache/kernel-driver && mkdir -p .cache/kernel-driver
	javac -nowarn -d .cache/kernel-driver -cp "$$(ls .cache/jars/kernel/*.jar | tr '\n' ':')" $(KERNEL_DIR)/src/lakecert/kernel/*.java
	test -f $@

$(UC_JAVA_PROBE): $(KERNEL_JARS) $(wildcard tests/uc_java/src/lakecert/ucjava/*.java)
	rm -rf .cache/uc-java-probe && mkdir -p .cache/uc-java-probe
	javac -nowarn -d .cache/uc-java-probe -cp "$$(ls .cache/jars/kernel/*.jar | tr '\n' ':')" tests/uc_java/src/lakecert/ucjava/*.java
	test -f $@

# Remade from scratch when its requirements change (pip would not remove what a new pin drops).
uc-sdk: $(UC_SDK)
$(UC_SDK): tests/uc_sdk/requirements.txt
	rm -rf $(UC_SDK_VENV)
	$(PYTHON) -m venv $(UC_SDK_VENV)
	$(UC_SDK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r tests/uc_sdk/requirements.txt
	$(UC_SDK_VENV)/bin/python -c "import unitycatalog.client"
	touch $@

# The pinned Allure command line (npm, runs on Node), local to the checkout: no global install.
$(ALLURE):
	mkdir -p .cache/allure3
	npm install --silent --no-audit --no-fund --prefix .cache/allure3 allure@$(ALLURE_VERSION)
	test -x $@

$(WHEELS): pyproject.toml scripts/core_requirements.py | $(STAMP)
	rm -rf .cache/wheels && mkdir -p .cache/wheels
	$(BIN)/python scripts/core_requirements.py > .cache/wheels/requirements.txt
	$(BIN)/python -m pip wheel --quiet -w .cache/wheels -r .cache/wheels/requirements.txt
	touch $@

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

# What `make certify` needs; a venv with the developers' install (a superset) already has it.
$(CERTIFY_STAMP): pyproject.toml
	if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then touch $@; else \
	  test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/python -m pip install --quiet -e ".[iceberg]" && touch $@; fi

# Certify the embedded reference, then write the Allure report, the matrix and JUnit beside the
# results and certificate. The run's exit code is kept (0 certified, 1 fail, 2 error). It needs
# only lakecert with the iceberg extra (the reference Iceberg REST catalog) and Allure: the jars,
# drivers and SDKs of the real-engine targets are fetched by `make setup` for the tests, or on
# first use by a run of such a target.
# OUT names the run's folder once, in the shell: make expands $(OUT) (and its `date`) at each use,
# so two uses a second apart named two folders and the report found no results.
certify: $(CERTIFY_STAMP) $(ALLURE)
	out="$(OUT)"; $(BIN)/lakecert run --out "$$out"; status=$$?; $(BIN)/lakecert report "$$out" || exit 2; exit $$status

# One worker more than the cores: the suite waits on JVMs, servers and subprocesses for most of its
# time (9.4 of 30 core-minutes used in a 15-minute run on 2 cores), and the third worker fills that
# wait (docs/benchmarks.md, session 14: 13 min 47 s against 15 min 07 s).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder -q --durations=30 tests

lint: setup
	$(BIN)/ruff check conformance reference_impl tests scripts bench
	$(BIN)/mypy

selftest: setup
	$(BIN)/lakecert selftest

bench: setup
	$(BIN)/python bench/delta_profiles.py
	$(BIN)/python bench/iceberg_model.py
	$(BIN)/python bench/report.py

# Real Spark, minutes: the iceberg-row-delta profile on spark-iceberg (docs/benchmarks.md).
bench-spark: setup
	$(BIN)/python bench/spark_iceberg.py

# Observation runs of profile delta-row-conflicts on the real Delta engines (docs/compatibility.md,
# "observed matrix"): every two-operation and generated schedule, planned by the model, niced; one
# SparkSession for delta-spark. Hours on 2 shared cores: not part of `make test`. Results and the
# figures of bench/delta_engines.py under $(OBSERVE)/<target>/; a FAIL (exit 1) is an observation.
OBSERVE ?= reports/observe-delta
observe-delta: setup
	status=0; for t in delta-rs-engine delta-spark; do \
		nice -n 10 $(BIN)/lakecert run --target $$t --profile delta-row-conflicts \
			--config bench/observe_delta.yaml --out $(OBSERVE)/$$t; s=$$?; [ $$s -le 1 ] || status=$$s; \
		$(BIN)/python bench/delta_engines.py --from $(OBSERVE)/$$t || status=2; \
	done; exit $$status

# Nessie: its start-up, the catalog profile on it, Spark's resurrected-row cell through it (minutes).
bench-nessie: setup
	$(BIN)/python bench/nessie.py

# Delta Kernel as the delta-row-conflicts engine: the whole profile (one JVM, under a minute), its
# time per schedule and first counterexample (docs/benchmarks.md, docs/compatibility.md).
bench-kernel-engine: setup
	$(BIN)/python bench/delta_engines.py --target delta-kernel

# Mutation testing of the reference with cosmic-ray (docs/mutation.md): cached per module in .mutation/,
# bounded by BUDGET seconds (a stopped run resumes), MODULES from tests/mutation/groups.py.
MODULES ?= catalog,client,client-log
BUDGET ?= 3600
mutation: setup
	nice -n 10 $(BIN)/python -m tests.mutation.run --modules $(MODULES) --budget-s $(BUDGET)

docs: setup
	$(BIN)/lakecert requirements --markdown > docs/requirements.md
	$(BIN)/lakecert compat-page > docs/who-may-write.md

clean:
	rm -rf $(VENV) reports/*/ .hypothesis .mutation
