# Two entry points (README): `make certify` and `make test`. Both set up .venv first and are
# idempotent: the install step reruns only when pyproject.toml changes.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ALLURE_VERSION := 2.46.1
ALLURE := .cache/allure/node_modules/allure-commandline/dist/bin/allure
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
OUT ?= reports/certify-$(shell date +%Y%m%d-%H%M%S)

.PHONY: setup certify test lint selftest bench bench-spark docs clean rck-jars mutation

setup: $(STAMP) $(ALLURE) $(ICEBERG_JAR) $(ICEBERG_AWS_JAR) $(RCK_JARS) $(KERNEL_DRIVER)

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

# The pinned Allure command line (npm, runs on Java), local to the checkout: no global install.
$(ALLURE):
	mkdir -p .cache/allure
	npm install --silent --no-audit --no-fund --prefix .cache/allure allure-commandline@$(ALLURE_VERSION)
	test -x $@

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

# Certify the embedded reference, then write the Allure report, the matrix and JUnit beside the
# results and certificate. The run's exit code is kept (0 certified, 1 fail, 2 error).
certify: setup
	$(BIN)/lakecert run --out $(OUT); status=$$?; $(BIN)/lakecert report $(OUT) || exit 2; exit $$status

test: setup
	$(BIN)/python -m pytest -n auto --dist loadgroup -q tests

lint: setup
	$(BIN)/ruff check conformance reference_impl tests scripts bench
	$(BIN)/mypy

selftest: setup
	$(BIN)/lakecert selftest

bench: setup
	$(BIN)/python bench/delta_profiles.py
	$(BIN)/python bench/iceberg_model.py

# Real Spark, minutes: the iceberg-row-delta profile on spark-iceberg (docs/benchmarks.md).
bench-spark: setup
	$(BIN)/python bench/spark_iceberg.py

# Mutation testing of the reference with cosmic-ray (docs/mutation.md): cached per module in .mutation/,
# bounded by BUDGET seconds (a stopped run resumes), MODULES from tests/mutation/groups.py.
MODULES ?= catalog,client,client-log
BUDGET ?= 3600
mutation: setup
	nice -n 10 $(BIN)/python -m tests.mutation.run --modules $(MODULES) --budget-s $(BUDGET)

docs: setup
	$(BIN)/lakecert requirements --markdown > docs/requirements.md

clean:
	rm -rf $(VENV) reports/*/ .hypothesis .mutation
