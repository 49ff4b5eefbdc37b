# Sourced by scripts/services: the test servers that run on the JVM from
# Maven Central's jars, Cassandra and HBase (with its Thrift2 gateway), and
# the fetching of those jars. Reads the ports, versions and directories
# scripts/services sets.
# shellcheck shell=bash

# maven_jars NAME VERSION "GROUP:ARTIFACT..." "EXCLUDED JAR...": the jars of
# the artifacts and their dependencies under the cache, fetched once; prints
# the directory
maven_jars() {
    local name=$1 version=$2 artifacts=$3 excluded=$4 dir deps="" a
    dir=$CACHE/$name-$version
    if [ ! -e "$dir/done" ]; then
        need mvn java
        mkdir -p "$dir"
        for a in $artifacts; do
            deps+="<dependency><groupId>${a%%:*}</groupId><artifactId>${a#*:}</artifactId><version>$version</version></dependency>"
        done
        cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>yardstick</groupId><artifactId>$name-server</artifactId><version>1</version>
  <dependencies>$deps</dependencies>
</project>
POM
        say "downloading $name $version and its dependencies with maven (once)"
        (cd "$dir" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib -DincludeScope=runtime) >&2 ||
            die "maven could not fetch $name $version; see the output above"
        for a in $excluded; do rm -f "$dir/lib/$a"; done
        touch "$dir/done"
    fi
    echo "$dir/lib"
}

# --- Cassandra ----------------------------------------------------------------
cassandra_jars() {
    maven_jars cassandra "$CASSANDRA_VERSION" org.apache.cassandra:cassandra-all ""
}

# cassandra_launch DATA CQL_PORT STORAGE_PORT JMX_PORT: writes a configuration
# under DATA, starts a node in the background, writes DATA/cassandra.pid
cassandra_launch() {
    local data=$1 cql=$2 storage=$3 jmx=$4 lib
    lib=$(cassandra_jars)
    mkdir -p "$data"
    make_certs
    cat "$DIR/tls/server.key" "$DIR/tls/server.crt" >"$data/keystore.pem"
    # ByteOrderedPartitioner: token order is key order, so the conformance
    # suite can check scans (production clusters use Murmur3Partitioner)
    cat >"$data/cassandra.yaml" <<YAML
cluster_name: yardstick-test
num_tokens: 1
partitioner: org.apache.cassandra.dht.ByteOrderedPartitioner
data_file_directories: [$data/data]
commitlog_directory: $data/commitlog
saved_caches_directory: $data/saved_caches
hints_directory: $data/hints
cdc_raw_directory: $data/cdc
commitlog_sync: periodic
commitlog_sync_period: 10000ms
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:$storage"
listen_address: 127.0.0.1
storage_port: $storage
native_transport_port: $cql
rpc_address: 127.0.0.1
endpoint_snitch: SimpleSnitch
start_native_transport: true
# bulk loads of thousands of ~1 KB records per unlogged batch
batch_size_warn_threshold: 16MiB
batch_size_fail_threshold: 64MiB
# TLS is optional on the native port: plain and TLS clients share it, so the
# TLS test needs no second node
client_encryption_options:
  enabled: true
  optional: true
  require_client_auth: false
  ssl_context_factory:
    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory
  keystore: $data/keystore.pem
YAML
    cat >"$data/logback.xml" <<XML
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$data/system.log</file>
    <encoder><pattern>%-5level [%thread] %date %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
XML
    # the module flags Cassandra's own jvm17-server.options sets
    local opens=(java.lang.module jdk.internal.loader jdk.internal.ref jdk.internal.reflect
        jdk.internal.math jdk.internal.module jdk.internal.util.jar sun.nio.ch java.io java.nio
        java.util.concurrent.atomic java.util java.lang java.lang.reflect jdk.internal.misc)
    local jvm=(-Xms512m -Xmx512m -XX:+UseG1GC -Djdk.attach.allowAttachSelf=true
        --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
        --add-exports java.base/jdk.internal.ref=ALL-UNNAMED
        --add-exports java.base/sun.nio.ch=ALL-UNNAMED
        --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
        --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
        --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
        --add-exports java.sql/java.sql=ALL-UNNAMED
        --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED)
    local o
    for o in "${opens[@]}"; do jvm+=(--add-opens "java.base/$o=ALL-UNNAMED"); done
    nohup java "${jvm[@]}" -Dcassandra.config="file://$data/cassandra.yaml" \
        -Dlogback.configurationFile="$data/logback.xml" -Dcassandra-foreground=yes \
        -Dcassandra.jmx.local.port="$jmx" -Dcassandra.storagedir="$data" \
        -cp "$lib/*" org.apache.cassandra.service.CassandraDaemon >"$data/out.log" 2>&1 &
    echo $! >"$data/cassandra.pid"
}

start_cassandra() {
    port_open "$CQL_PORT" && return 0
    cassandra_launch "$DIR/cassandra" "$CQL_PORT" 57000 57199
    wait_for 120 cassandra "$DIR/cassandra/system.log $DIR/cassandra/out.log" port_open "$CQL_PORT"
}

stop_cassandra() {
    local f=$DIR/cassandra/cassandra.pid
    if [ -s "$f" ]; then
        local pid
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$f"
    fi
}

# --- HBase (standalone) and its Thrift2 gateway ------------------------------
# servlet-api 2.5 (from Hadoop) shadows the 3.1 API HBase's web UI needs
hbase_jars() {
    maven_jars hbase "$HBASE_VERSION" "org.apache.hbase:hbase-server org.apache.hbase:hbase-thrift" servlet-api-2.5.jar
}

# the module flags HBase's own bin/hbase sets on Java 11 and later
HBASE_JVM=(--add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true)

hbase_conf() { # hbase_conf DATA: hbase-site.xml and log4j.properties under DATA/conf
    local data=$1 p=("${HBASE_PORTS[@]}")
    mkdir -p "$data/conf"
    cat >"$data/conf/hbase-site.xml" <<XML
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$DIR/hbase/data</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$DIR/hbase/zookeeper</value></property>
  <property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>${p[5]}</value></property>
  <property><name>hbase.master.hostname</name><value>127.0.0.1</value></property>
  <property><name>hbase.regionserver.hostname</name><value>127.0.0.1</value></property>
  <property><name>hbase.master.port</name><value>${p[1]}</value></property>
  <property><name>hbase.master.info.port</name><value>${p[2]}</value></property>
  <property><name>hbase.master.info.bindAddress</name><value>127.0.0.1</value></property>
  <property><name>hbase.regionserver.port</name><value>${p[3]}</value></property>
  <property><name>hbase.regionserver.info.port</name><value>${p[4]}</value></property>
  <property><name>hbase.regionserver.info.bindAddress</name><value>127.0.0.1</value></property>
  <property><name>hbase.thrift.info.port</name><value>-1</value></property>
  <!-- 1 MiB values and batch loads in one frame -->
  <property><name>hbase.regionserver.thrift.framed.max_frame_size_in_mb</name><value>64</value></property>
  <!-- a gateway whose HBase went away answers within seconds -->
  <property><name>hbase.client.retries.number</name><value>3</value></property>
  <!-- the region server bean observation reads: aggregated every second, not 5 -->
  <property><name>hbase.regionserver.metrics.period</name><value>1000</value></property>
</configuration>
XML
    cat >"$data/conf/log4j.properties" <<LOG
log4j.rootLogger=WARN,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
LOG
    # the JMX beans observation reads are snapshots taken every metrics
    # period (10 s by default): every second here, like the region server's
    # own aggregation above
    echo '*.period=1' >"$data/conf/hadoop-metrics2-hbase.properties"
}

# the master has finished initializing (meta and namespace tables assigned)
hbase_ready() {
    local reply
    exec 3<>"/dev/tcp/127.0.0.1/${HBASE_PORTS[2]}" || return 1
    printf 'GET /jmx?qry=Hadoop:service=HBase,name=Master,sub=Server HTTP/1.0\r\n\r\n' >&3
    reply=$(cat <&3)
    exec 3<&-
    echo "$reply" | grep -q '"masterFinishedInitializationTime" *: *[1-9]'
}

# hbase_gateway DATA PORT: starts a Thrift2 gateway (framed transport), writes DATA/gateway.pid
hbase_gateway() {
    local data=$1 port=$2 lib
    lib=$(hbase_jars)
    hbase_conf "$data"
    # runs: java
    nohup java -Xmx256m "${HBASE_JVM[@]}" -cp "$data/conf:$lib/*" \
        org.apache.hadoop.hbase.thrift2.ThriftServer -b 127.0.0.1 -p "$port" -f start \
        >"$data/gateway.log" 2>&1 &
    echo $! >"$data/gateway.pid"
}

start_hbase() {
    local data=$DIR/hbase lib
    port_open "${HBASE_PORTS[0]}" && return 0
    lib=$(hbase_jars)
    hbase_conf "$data"
    if ! port_open "${HBASE_PORTS[1]}"; then
        nohup java -Xmx1g "${HBASE_JVM[@]}" -cp "$data/conf:$lib/*" \
            org.apache.hadoop.hbase.master.HMaster start >"$data/hbase.log" 2>&1 &
        echo $! >"$data/hbase.pid"
    fi
    wait_for 180 hbase "$data/hbase.log" hbase_ready
    hbase_gateway "$data" "${HBASE_PORTS[0]}"
    wait_for 60 hbase-thrift2 "$data/gateway.log" port_open "${HBASE_PORTS[0]}"
}

stop_hbase() {
    local f pid
    for f in "$DIR/hbase/gateway.pid" "$DIR/hbase/hbase.pid"; do
        [ -s "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$f"
    done
}
