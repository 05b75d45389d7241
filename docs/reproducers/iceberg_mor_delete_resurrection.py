"""Apache Iceberg on Spark: under `snapshot` isolation a merge-on-read DELETE that races an UPDATE of the
same row commits, and the row it deleted is still in the table afterwards ("resurrected").

Standalone: needs pyspark, moto and boto3, a folder with Iceberg's Spark runtime jar and
iceberg-aws-bundle, and a sqlite-jdbc jar (searched, or --sqlite-jdbc-jar); nothing from lakecert.
Found by lakecert's Iceberg seed cell: table format v2 or v3 with write.update.mode =
write.delete.mode = merge-on-read and write.{update,delete}.isolation-level = snapshot; row id=1
exists; writer A runs `UPDATE t SET value='updated' WHERE id=1`, writer B runs
`DELETE FROM t WHERE id=1`, both from the same snapshot; A commits first, then B.

How the interleaving is forced (Spark does all planning, writing and conflict validation itself):
  * the catalog is Iceberg's JdbcCatalog on a SQLite file. Like every Iceberg catalog it commits by
    writing a new metadata.json through the table's FileIO and then compare-and-swapping the
    table's metadata pointer (here UPDATE ... WHERE metadata_location = <old>). The warehouse is an
    in-process moto S3 server, and Spark's S3FileIO reaches it through a small HTTP proxy in this
    script (everything on 127.0.0.1);
  * writer B's DELETE runs in a Python thread of the one SparkSession. The proxy holds B's first
    metadata.json PUT: B has planned against snapshot S0 and written its delete file, but has not
    committed yet;
  * writer A's UPDATE then runs in the main thread (also from S0) and commits;
  * the proxy lets B's PUT through. B's pointer swap fails (the table moved on to A's snapshot), so
    Iceberg's commit retry refreshes, re-runs B's conflict validation against A's snapshot and tries
    again. Whether B then commits or is refused is Iceberg's own decision.

Expected (what a serializable history allows): B is refused, or the row is gone. The anomaly: both
writers commit and row id=1 is still there with A's value.

Usage:
  python iceberg_mor_delete_resurrection.py --iceberg-jars DIR [--format-version 2|3]
      [--isolation snapshot|serializable] [--sqlite-jdbc-jar JAR]
  -> exit 1 when the row survives B's committed DELETE, 0 when it does not (B refused, or the row
     is gone), 2 when the set-up itself failed.
"""

from __future__ import annotations

import argparse
import glob
import http.client
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BUCKET = "warehouse"
ACCESS_KEY, SECRET_KEY, REGION = "testing", "testing", "us-east-1"
TABLE = "repro.db.t"
HERE = os.path.dirname(os.path.abspath(__file__))
SQLITE_JDBC_PLACES = [  # the lakecert checkout's jar cache, then the local Maven repository
    os.path.join(HERE, "..", "..", ".cache", "jars", "rck", "sqlite-jdbc-*.jar"),
    os.path.expanduser("~/.m2/repository/org/xerial/sqlite-jdbc/*/sqlite-jdbc-*.jar"),
]
SKIP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "expect"}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class CommitGate:
    """Holds the first metadata.json upload seen after arm() (writer B's commit) until `released`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.armed = False
        self.held = threading.Event()
        self.released = threading.Event()
        self.metadata_puts: list[str] = []  # every metadata.json written, in order, with a label

    def arm(self) -> None:
        with self.lock:
            self.armed = True

    def take(self) -> bool:
        with self.lock:
            hold, self.armed = self.armed, False
            return hold


def start_s3_proxy(s3_port: int, gate: CommitGate) -> ThreadingHTTPServer:
    """Plain HTTP forwarder to moto; moto does not check request signatures, so Host may change."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            path = self.path.split("?", 1)[0]
            if self.command == "PUT" and path.endswith(".metadata.json"):
                name = path.rsplit("/", 1)[-1]
                if gate.take():
                    gate.metadata_puts.append(f"{name}  (writer B's first commit attempt, held until A committed)")
                    log(f"s3 proxy: HOLDING writer B's commit (PUT {name})")
                    gate.held.set()
                    if not gate.released.wait(600):
                        log("s3 proxy: release timed out; forwarding anyway")
                    log("s3 proxy: releasing writer B's commit")
                elif gate.released.is_set():
                    gate.metadata_puts.append(f"{name}  (writer B's retry, after refresh and re-validation)")
                elif gate.held.is_set():
                    gate.metadata_puts.append(f"{name}  (writer A's commit)")
                else:
                    gate.metadata_puts.append(f"{name}  (set-up)")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in SKIP_HEADERS}
            conn = http.client.HTTPConnection("127.0.0.1", s3_port, timeout=600)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                status, reason, resp_headers = resp.status, resp.reason, resp.getheaders()
            finally:
                conn.close()
            self.send_response(status, reason)
            for k, v in resp_headers:
                # a HEAD answer keeps the object's Content-Length; otherwise it is the body we send
                if k.lower() not in SKIP_HEADERS and (self.command == "HEAD" or k.lower() != "content-length"):
                    self.send_header(k, v)
            if self.command != "HEAD":
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward  # noqa: N815

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], ConnectionError):  # clients dropping idle sockets
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, name="s3-proxy", daemon=True).start()
    return server


def start_moto() -> tuple[Any, int]:
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no per-request access log
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    ).create_bucket(Bucket=BUCKET)
    return server, port


def find_jars(args: argparse.Namespace) -> list[str]:
    jars = sorted(glob.glob(os.path.join(args.iceberg_jars, "iceberg-*.jar")))
    if not any("iceberg-spark-runtime" in j for j in jars) or not any("iceberg-aws-bundle" in j for j in jars):
        raise SystemExit(f"{args.iceberg_jars} needs an iceberg-spark-runtime and an iceberg-aws-bundle jar")
    sqlite = args.sqlite_jdbc_jar
    if sqlite is None:
        candidates = [os.path.join(args.iceberg_jars, "sqlite-jdbc-*.jar"), *SQLITE_JDBC_PLACES]
        found = [j for pattern in candidates for j in sorted(glob.glob(pattern))]
        if not found:
            raise SystemExit("no sqlite-jdbc jar found; pass --sqlite-jdbc-jar (Maven: org.xerial:sqlite-jdbc)")
        sqlite = found[-1]
    return [*jars, sqlite]


def build_spark(jars: list[str], workdir: str, s3_endpoint: str) -> Any:
    from pyspark.sql import SparkSession

    cat = "spark.sql.catalog.repro"
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("iceberg-mor-delete-resurrection")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config(cat, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{cat}.type", "jdbc")
        .config(f"{cat}.uri", f"jdbc:sqlite:{os.path.join(workdir, 'catalog.db')}")
        .config(f"{cat}.jdbc.schema-version", "V1")
        .config(f"{cat}.warehouse", f"s3://{BUCKET}/wh")
        .config(f"{cat}.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .config(f"{cat}.cache-enabled", "false")
        .config(f"{cat}.s3.endpoint", s3_endpoint)
        .config(f"{cat}.s3.path-style-access", "true")
        .config(f"{cat}.s3.access-key-id", ACCESS_KEY)
        .config(f"{cat}.s3.secret-access-key", SECRET_KEY)
        .config(f"{cat}.client.region", REGION)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def table_rows(spark: Any) -> list[tuple[int, str]]:
    return [(r["id"], r["value"]) for r in spark.sql(f"SELECT id, value FROM {TABLE} ORDER BY id").collect()]


def short_error(exc: BaseException) -> str:
    text = str(exc)
    for pattern in (r"(org\.apache\.iceberg\.exceptions\.\w+: [^\n]+)", r"([\w.]+Exception: [^\n]+)"):
        m = re.search(pattern, text)
        if m:
            return m.group(1)[:400]
    return text.splitlines()[0][:400] if text else type(exc).__name__


def run(args: argparse.Namespace, spark: Any, gate: CommitGate) -> int:
    iso = args.isolation
    spark.sql("CREATE NAMESPACE IF NOT EXISTS repro.db")
    spark.sql(
        f"""CREATE TABLE {TABLE} (id INT, value STRING) USING iceberg TBLPROPERTIES (
            'format-version' = '{args.format_version}',
            'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read',
            'write.merge.mode' = 'merge-on-read',
            'write.delete.isolation-level' = '{iso}', 'write.update.isolation-level' = '{iso}')"""
    )
    seed = [(1, "original"), (2, "other"), (3, "other")]
    # one data file holding all three rows, so B's DELETE is a row-level (merge-on-read) delete and not a
    # metadata-only drop of a whole file
    spark.createDataFrame(seed, "id INT, value STRING").coalesce(1).writeTo(TABLE).append()
    s0 = spark.sql(f"SELECT snapshot_id FROM {TABLE}.snapshots").collect()[-1][0]
    log(f"{TABLE}: format v{args.format_version}, merge-on-read, {iso} isolation; snapshot S0 = {s0}")
    before = table_rows(spark)
    log(f"before: {before}")

    outcome: dict[str, str] = {}

    def writer_b() -> None:
        try:
            spark.sql(f"DELETE FROM {TABLE} WHERE id = 1")
            outcome["B"] = "committed"
        except Exception as e:  # noqa: BLE001 - report whatever Spark/Iceberg raised
            outcome["B"] = f"refused: {short_error(e)}"

    gate.arm()
    log("writer B: DELETE FROM t WHERE id = 1   (own thread; its commit will be held)")
    thread_b = threading.Thread(target=writer_b, name="writer-B")
    thread_b.start()
    while not gate.held.wait(0.5):
        if not thread_b.is_alive():
            log(f"writer B finished without its commit passing the proxy; B: {outcome.get('B')}")
            return 2
    log("writer A: UPDATE t SET value = 'updated' WHERE id = 1   (main thread, also from S0)")
    try:
        spark.sql(f"UPDATE {TABLE} SET value = 'updated' WHERE id = 1")
        outcome["A"] = "committed"
    except Exception as e:  # noqa: BLE001
        outcome["A"] = f"refused: {short_error(e)}"
    log(f"writer A: {outcome['A']}")
    gate.released.set()
    thread_b.join(600)
    b = outcome.get("B", "did not finish")
    log(f"writer B: {b}")

    after = table_rows(spark)
    print()
    print("metadata.json files written (one per commit attempt), in order:")
    for line in gate.metadata_puts:
        print(f"  {line}")
    print("snapshots:")
    for r in spark.sql(
        f"SELECT snapshot_id, parent_id, operation, summary FROM {TABLE}.snapshots ORDER BY committed_at"
    ).collect():
        s = r["summary"]
        print(
            f"  {r['snapshot_id']} parent={r['parent_id']} {r['operation']}: "
            f"+{s.get('added-data-files', 0)} data files, +{s.get('added-delete-files', 0)} delete files"
            f" ({s.get('added-position-deletes', 0)} position deletes, {s.get('added-dvs', 0)} DVs)"
        )
    print(f"before:   {before}")
    print(f"after:    {after}")
    print(f"writer A  UPDATE t SET value='updated' WHERE id=1: {outcome['A']}")
    print(f"writer B  DELETE FROM t WHERE id=1:               {b}")
    survivors = [r for r in after if r[0] == 1]
    if b == "committed" and survivors:
        print(f"ANOMALY: both commits succeeded and the deleted row is still there: {survivors}")
        return 1
    if b == "committed":
        print("no anomaly: B committed and row id=1 is gone")
    else:
        print("no anomaly: writer B's DELETE was refused")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--iceberg-jars", required=True, help="folder with iceberg-spark-runtime and iceberg-aws-bundle")
    p.add_argument("--format-version", choices=["2", "3"], default="2")
    p.add_argument("--isolation", choices=["snapshot", "serializable"], default="snapshot")
    p.add_argument("--sqlite-jdbc-jar", default=None, help="sqlite-jdbc jar for the JDBC catalog (default: searched)")
    args = p.parse_args()
    jars = find_jars(args)
    print("jars: " + " ".join(os.path.basename(j) for j in jars))

    workdir = tempfile.mkdtemp(prefix="iceberg-mor-repro-")
    gate = CommitGate()
    moto_server: Any = None
    proxy: ThreadingHTTPServer | None = None
    spark: Any = None
    try:
        moto_server, s3_port = start_moto()
        proxy = start_s3_proxy(s3_port, gate)
        log(f"moto S3 on 127.0.0.1:{s3_port}, proxy on 127.0.0.1:{proxy.server_port}")
        spark = build_spark(jars, workdir, f"http://127.0.0.1:{proxy.server_port}")
        version = spark.sparkContext._jvm.org.apache.iceberg.IcebergBuild.version()
        log(f"Spark {spark.version}, Iceberg {version}")
        return run(args, spark, gate)
    except Exception as e:  # noqa: BLE001
        log(f"set-up failed: {type(e).__name__}: {short_error(e)}")
        return 2
    finally:
        gate.released.set()
        if spark is not None:
            spark.stop()
        if proxy is not None:
            proxy.shutdown()
        if moto_server is not None:
            moto_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
