// A very small CQL shell for scripts and smoke tests, run by `scripts/engines/cassandra.sh cql` with Java's
// single-file source launcher (no javac needed) against the DataStax Java driver 3.x that comes with the
// cassandra-all jar set. Not a cqlsh: no CQL parsing beyond splitting the input on ';' at line ends.
//
//   cassandra.sh cql [-h HOST[,HOST...]] [-p PORT] [-c CONSISTENCY] [-k KEYSPACE] [-e STATEMENT]...
//
// Without -e, statements are read from stdin, one or more lines each, each ended by ';' at a line end.
// Rows are printed one a line, columns separated by a tab (null as NULL). Exit status 1 on any error.

import com.datastax.driver.core.Cluster;
import com.datastax.driver.core.ColumnDefinitions;
import com.datastax.driver.core.ConsistencyLevel;
import com.datastax.driver.core.QueryOptions;
import com.datastax.driver.core.ResultSet;
import com.datastax.driver.core.Row;
import com.datastax.driver.core.Session;
import com.datastax.driver.core.SimpleStatement;
import com.datastax.driver.core.SocketOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class Cql {
  public static void main(String[] args) throws Exception {
    List<String> hosts = new ArrayList<>();
    int port = 9042;
    ConsistencyLevel consistency = ConsistencyLevel.ONE;
    String keyspace = null;
    List<String> statements = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = i + 1 < args.length ? args[i + 1] : null;
      if (v == null && a.startsWith("-")) usage("missing value after " + a);
      switch (a) {
        case "-h": for (String h : v.split(",")) if (!h.isBlank()) hosts.add(h.trim()); i++; break;
        case "-p": port = Integer.parseInt(v); i++; break;
        case "-c": consistency = ConsistencyLevel.valueOf(v.toUpperCase()); i++; break;
        case "-k": keyspace = v; i++; break;
        case "-e": statements.add(v); i++; break;
        default: usage("unknown argument " + a);
      }
    }
    if (hosts.isEmpty()) hosts.add("127.0.0.1");
    if (statements.isEmpty()) statements = readStatements();

    Cluster cluster = Cluster.builder()
        .addContactPoints(hosts.toArray(new String[0]))
        .withPort(port)
        .withoutJMXReporting()
        .withoutMetrics()
        .withSocketOptions(new SocketOptions().setConnectTimeoutMillis(5000).setReadTimeoutMillis(30000))
        .withQueryOptions(new QueryOptions().setConsistencyLevel(consistency))
        .build();
    int status = 0;
    try (Session session = keyspace == null ? cluster.connect() : cluster.connect(keyspace)) {
      for (String cql : statements) {
        try {
          ResultSet rs = session.execute(new SimpleStatement(cql));
          ColumnDefinitions columns = rs.getColumnDefinitions();
          for (Row row : rs) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < columns.size(); c++) {
              if (c > 0) line.append('\t');
              Object value = row.getObject(c);
              line.append(value == null ? "NULL" : value.toString());
            }
            System.out.println(line);
          }
        } catch (RuntimeException e) {
          System.err.println("cql: error in [" + cql + "]: " + e);
          status = 1;
          break;
        }
      }
    } catch (RuntimeException e) {
      System.err.println("cql: cannot connect to " + hosts + ":" + port + ": " + e);
      status = 1;
    } finally {
      cluster.close();
    }
    System.out.flush();
    System.exit(status);
  }

  private static List<String> readStatements() throws Exception {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("--") || t.startsWith("//")) continue;
      current.append(line).append('\n');
      if (t.endsWith(";")) {
        String s = current.toString().strip();
        out.add(s.substring(0, s.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) out.add(current.toString().strip());
    return out;
  }

  private static void usage(String why) {
    System.err.println("cql: " + why);
    System.err.println("usage: cql [-h HOST[,HOST...]] [-p PORT] [-c CONSISTENCY] [-k KEYSPACE] [-e STATEMENT]...");
    System.exit(2);
  }
}
