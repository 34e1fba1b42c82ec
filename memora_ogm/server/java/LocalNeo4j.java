import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * An embedded Neo4j Community server with the Bolt connector, for machines
 * without Docker. Usage: LocalNeo4j HOME PORT PASSWORD PLUGINS PAGECACHE_MB
 * The password arrives on stdin's first line when PASSWORD is "-", so it never
 * shows up in the process list.
 */
public final class LocalNeo4j {
    public static final String READY = "MEMORA-OGM NEO4J READY";

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable failure) {
            // Never linger half-started: the server's own threads would keep the JVM alive.
            System.out.println("MEMORA-OGM NEO4J FAILED: " + failure);
            failure.printStackTrace();
            System.out.flush();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: LocalNeo4j HOME PORT PASSWORD|- PLUGINS PAGECACHE_MB");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = args[2].equals("-")
                ? new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine()
                : args[2];
        Path plugins = Path.of(args[3]).toAbsolutePath();
        long pageCacheBytes = Long.parseLong(args[4]) * 1024L * 1024L;

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.plugin_dir, plugins)
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*"))
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheBytes)
                // Bolt waits 5 s + 5 s for idle threads and connections on shutdown by
                // default; a local test server has nothing worth waiting that long for.
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(500))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(500))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            System.out.println("MEMORA-OGM NEO4J STOPPED");
            System.out.flush();
            stopped.countDown();
        }));

        // The embedded API may administer users without logging in; Bolt clients
        // then need this password and are never asked to change it. A restart on the
        // same data folder with the same password is refused as "not a change": fine.
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } catch (RuntimeException e) {
            String message = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
            if (!message.contains("old password and new password cannot be the same")) {
                throw e;
            }
        }

        System.out.println(READY + " bolt://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }
}
