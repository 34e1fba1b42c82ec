import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.fs.DefaultFileSystemAbstraction;
import org.neo4j.kernel.impl.security.User;
import org.neo4j.logging.NullLogProvider;
import org.neo4j.memory.EmptyMemoryTracker;
import org.neo4j.server.security.SecureHasher;
import org.neo4j.server.security.SystemGraphCredential;
import org.neo4j.server.security.auth.CommunitySecurityModule;
import org.neo4j.server.security.auth.FileUserRepository;

/**
 * An embedded Neo4j Community server with the Bolt connector, for machines
 * without Docker.
 *
 * Usage: LocalNeo4j HOME PORT PASSWORD|- PLUGINS PAGECACHE_MB [--exit-on-stdin-eof] [--remove-when-orphaned DIR]
 *        [--setting NAME=VALUE]...
 *
 * The password arrives on stdin's first line when PASSWORD is "-", so it never
 * shows up in the process list. It is in force before Bolt accepts a connection:
 * a new data folder gets it as Neo4j's initial password (the auth.ini file that
 * neo4j-admin dbms set-initial-password writes), a kept one from a first start
 * with Bolt off. With --exit-on-stdin-eof the server stops once stdin closes,
 * which is what happens when the parent process dies, however it dies; it then
 * removes the folder given to --remove-when-orphaned, which nobody else is left
 * to remove. Each --setting is a neo4j.conf line, checked by Neo4j as that file's are.
 */
public final class LocalNeo4j {
    public static final String READY = "MEMORA-OGM NEO4J READY";

    private static final CountDownLatch STOP_REQUESTED = new CountDownLatch(1);
    private static final CountDownLatch STOPPED = new CountDownLatch(1);
    private static volatile boolean orphaned = false;

    private LocalNeo4j() {
    }

    public static void main(String[] args) {
        // SIGTERM and SIGINT ask main to stop the server and wait until it did.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            STOP_REQUESTED.countDown();
            awaitUninterruptibly(STOPPED);
        }));
        int status = 0;
        Options options = null;
        DatabaseManagementService[] dbms = new DatabaseManagementService[1];
        try {
            options = Options.parse(args);
            run(options, dbms);
        } catch (Throwable failure) {
            // Never linger half-started: the server's own threads would keep the JVM alive.
            System.out.println("MEMORA-OGM NEO4J FAILED: " + failure);
            failure.printStackTrace();
            status = 1;
        } finally {
            try {
                if (dbms[0] != null) {
                    dbms[0].shutdown();
                }
                if (orphaned && options != null && options.removeWhenOrphaned != null) {
                    removeTree(options.removeWhenOrphaned);
                }
                System.out.println("MEMORA-OGM NEO4J STOPPED");
            } catch (Throwable failure) {
                System.out.println("MEMORA-OGM NEO4J FAILED TO STOP: " + failure);
                failure.printStackTrace();
                status = 1;
            } finally {
                System.out.flush();
                STOPPED.countDown();
            }
        }
        System.exit(status);
    }

    private static void run(Options options, DatabaseManagementService[] dbms) throws Exception {
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String password = options.password.equals("-") ? stdin.readLine() : options.password;
        if (password == null) {
            throw new IllegalStateException("no password on stdin");
        }
        if (options.exitOnStdinEof) {
            watchForEof(stdin);
        }

        Config layout = Config.newBuilder().set(GraphDatabaseSettings.neo4j_home, options.home).build();
        Path initialPasswordFile = CommunitySecurityModule.getInitialUserRepositoryFile(layout);
        if (Files.exists(layout.get(GraphDatabaseInternalSettings.databases_root_path).resolve("system"))) {
            setPasswordWithBoltOff(options, password);
        } else {
            writeInitialPassword(initialPasswordFile, password);
        }
        if (STOP_REQUESTED.getCount() == 0) {
            return;
        }

        dbms[0] = builder(options)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", options.port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", options.port))
                .build();
        // Applied while the system database started; the file only held a hash of it.
        Files.deleteIfExists(initialPasswordFile);
        if (STOP_REQUESTED.getCount() == 0) {
            return;
        }
        System.out.println(READY + " bolt://127.0.0.1:" + options.port);
        System.out.flush();
        STOP_REQUESTED.await();
    }

    private static DatabaseManagementServiceBuilder builder(Options options) {
        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(options.home);
        // Parsed and validated as neo4j.conf is (an unknown name or a bad value fails the start).
        Config settings = Config.newBuilder().setRaw(options.settings).build();
        settings.getDeclaredSettings().values().stream()
                .filter(settings::isExplicitlySet)
                .forEach(setting -> builder.setConfig(setting, settings.get(setting)));
        return builder
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.plugin_dir, options.plugins)
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*"))
                .setConfig(GraphDatabaseSettings.pagecache_memory, options.pageCacheBytes)
                // Bolt waits 5 s + 5 s for idle threads and connections on shutdown by
                // default; a local test server has nothing worth waiting that long for.
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(500))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(500));
    }

    /** Neo4j applies this file to the default user when it creates the system database. */
    private static void writeInitialPassword(Path file, String password) throws Exception {
        Files.createDirectories(file.getParent());
        Files.deleteIfExists(file);
        FileUserRepository users = new FileUserRepository(
                new DefaultFileSystemAbstraction(), file, NullLogProvider.getInstance(), EmptyMemoryTracker.INSTANCE);
        users.start();
        try {
            SystemGraphCredential credential = SystemGraphCredential.createCredentialForPassword(
                    password.getBytes(StandardCharsets.UTF_8), new SecureHasher());
            users.create(new User("neo4j", null, credential, false, false));
        } finally {
            users.shutdown();
        }
    }

    /**
     * An existing system database keeps the last password (or neo4j's default), so
     * the new one is set while no connector listens. A restart with the same
     * password is refused as "not a change": fine.
     */
    private static void setPasswordWithBoltOff(Options options, String password) {
        DatabaseManagementService offline = builder(options).setConfig(BoltConnector.enabled, false).build();
        try {
            offline.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } catch (RuntimeException e) {
            String message = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
            if (!message.contains("old password and new password cannot be the same")) {
                throw e;
            }
        } finally {
            offline.shutdown();
        }
    }

    private static void watchForEof(BufferedReader stdin) {
        Thread watchdog = new Thread(() -> {
            try {
                while (stdin.read() != -1) {
                    // the parent writes nothing more; only the end of the pipe matters
                }
            } catch (IOException e) {
                // a broken pipe means the same as its end
            }
            orphaned = true;
            System.out.println("MEMORA-OGM NEO4J STDIN CLOSED: stopping");
            System.out.flush();
            STOP_REQUESTED.countDown();
        }, "memora-ogm-parent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    private static void removeTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | RuntimeException e) {
            System.out.println("MEMORA-OGM NEO4J could not remove " + root + ": " + e);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // keep waiting: the JVM must not halt before the store is closed
            }
        }
    }

    private record Options(
            Path home, int port, String password, Path plugins, long pageCacheBytes,
            boolean exitOnStdinEof, Path removeWhenOrphaned, Map<String, String> settings) {

        static Options parse(String[] args) {
            List<String> positional = new ArrayList<>();
            boolean exitOnStdinEof = false;
            Path removeWhenOrphaned = null;
            Map<String, String> settings = new HashMap<>();
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("--exit-on-stdin-eof")) {
                    exitOnStdinEof = true;
                } else if (args[i].equals("--remove-when-orphaned") && i + 1 < args.length) {
                    removeWhenOrphaned = Path.of(args[++i]).toAbsolutePath();
                } else if (args[i].equals("--setting") && i + 1 < args.length && args[i + 1].contains("=")) {
                    String[] line = args[++i].split("=", 2);
                    settings.put(line[0].strip(), line[1].strip());
                } else {
                    positional.add(args[i]);
                }
            }
            if (positional.size() != 5) {
                throw new IllegalArgumentException("usage: LocalNeo4j HOME PORT PASSWORD|- PLUGINS PAGECACHE_MB "
                        + "[--exit-on-stdin-eof] [--remove-when-orphaned DIR] [--setting NAME=VALUE]...");
            }
            return new Options(
                    Path.of(positional.get(0)).toAbsolutePath(),
                    Integer.parseInt(positional.get(1)),
                    positional.get(2),
                    Path.of(positional.get(3)).toAbsolutePath(),
                    Long.parseLong(positional.get(4)) * 1024L * 1024L,
                    exitOnStdinEof,
                    removeWhenOrphaned,
                    settings);
        }
    }
}
