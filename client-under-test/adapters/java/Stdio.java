// Stdio.java -- the generic part of the Java stdio adapter
// (docs/client-protocol.md, protocol 1): hello (with its wall_ms), task
// lines read on the main thread while tasks run, the clock probe answered
// there at once (System.currentTimeMillis(), which the JVM reads through the
// C library: libfaketime's clock under --time-scale), cancel and shutdown
// plumbing, the result built mechanically from what the library's hooks
// reported, and a small JSON reader and writer (the JDK has none). A
// library part implements Library (here OkHttpAdapter.java) and starts its
// tasks however the library runs requests concurrently.
//
// Never printed: the key (read from the task's key_env and handed to the
// library only) and the request body.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Stdio {
	/** What a library part provides. */
	public interface Library {
		/** The hello's "client" object. */
		Map<String, Object> hello();

		/** Start task t without blocking; report through r, end with r.finish(). */
		void start(Task t, Reporter r);
	}

	/** One task line (the members an adapter uses). */
	public static final class Task {
		public final String id, cls, method, url, body, keyEnv;
		public final Map<String, String> headers = new LinkedHashMap<>();
		public final Integer maxAttempts; // null: no limit given
		public final Double maxWaitS;     // null: no limit given
		public final boolean stream;

		@SuppressWarnings("unchecked")
		Task(Map<String, Object> m) {
			id = (String) m.get("id");
			cls = String.valueOf(m.get("class"));
			method = (String) m.get("method");
			url = (String) m.get("url");
			body = (String) m.get("body");
			keyEnv = (String) m.get("key_env");
			Object h = m.get("headers");
			if (h instanceof Map)
				((Map<String, Object>) h).forEach((k, v) -> headers.put(k, String.valueOf(v)));
			Map<String, Object> b = m.get("budget") instanceof Map ? (Map<String, Object>) m.get("budget") : Map.of();
			maxAttempts = b.get("max_attempts") instanceof Number ? ((Number) b.get("max_attempts")).intValue() : null;
			maxWaitS = b.get("max_wait_s") instanceof Number ? ((Number) b.get("max_wait_s")).doubleValue() : null;
			stream = Boolean.TRUE.equals(m.get("stream"));
		}

		/** The task's secret, from the environment variable it names. */
		public String key() {
			String k = keyEnv == null ? null : System.getenv(keyEnv);
			return k == null ? "" : k;
		}

		/** Whether the task creates something (its provider_id is the answer's "id"). */
		public boolean isWrite() {
			return cls.contains("write");
		}
	}

	/** One task's attempts as the library's hooks report them; thread-safe. */
	public static final class Reporter {
		private final Task task;
		private int attempts, lastStatus;
		private boolean answered, pending, cancelled, finished;
		private long lastEndNs, waitedNs;
		private Runnable abort = () -> {};

		Reporter(Task t) {
			task = t;
		}

		/** Attempt n+1 is about to go on the wire; gives its number. */
		public synchronized int sent() {
			if (lastEndNs != 0) {
				waitedNs += System.nanoTime() - lastEndNs;
				lastEndNs = 0;
			}
			attempts++;
			pending = true;
			Map<String, Object> m = msg("action_sent");
			m.put("attempt", attempts);
			m.put("idempotency_key", task.headers.get("Idempotency-Key"));
			emit(m);
			return attempts;
		}

		/** The current attempt's outcome: a status and its raw Retry-After (or
		 *  null), or status 0 and a transport error. */
		public synchronized void result(int status, String retryAfter, String error) {
			if (!pending)
				return;
			pending = false;
			lastEndNs = System.nanoTime();
			lastStatus = status;
			answered |= status > 0;
			Map<String, Object> m = msg("action_result");
			m.put("attempt", attempts);
			m.put("status", status);
			m.put("retry_after", retryAfter);
			m.put("error", error);
			emit(m);
		}

		/** How the library aborts this task (called on a cancel or shutdown). */
		public synchronized void onCancel(Runnable r) {
			abort = r;
		}

		synchronized boolean cancel() {
			if (finished)
				return false;
			cancelled = true;
			abort.run();
			return true;
		}

		public synchronized boolean isCancelled() {
			return cancelled;
		}

		/**
		 * Prints the task's result, mapped mechanically: cancelled after a
		 * cancel; a 2xx answer read whole is succeeded; an HTTP status the
		 * library returned (or the hooks saw on the last attempt, when it
		 * gave up with an exception) is failed, sent "yes"; a transport error
		 * or a body cut short is failed, sent "unknown".
		 * status: the final answer's (0: none); body: its text or null;
		 * partial: its body was cut short; error: what the library raised.
		 */
		public synchronized void finish(int status, String body, boolean partial, String error) {
			if (finished)
				return;
			finished = true;
			if (status == 0 && !pending)
				status = lastStatus;
			String outcome = "failed", sent = "no";
			Object pid = null;
			if (cancelled) {
				outcome = "cancelled";
				if (lastEndNs != 0) // the wait the cancel cut short
					waitedNs += System.nanoTime() - lastEndNs;
				sent = answered ? "yes" : attempts > 0 ? "unknown" : "no";
			} else if (partial) {
				sent = "unknown";
			} else if (error == null && status >= 200 && status < 300) {
				outcome = "succeeded";
				sent = "yes";
				if (task.isWrite() && body != null) {
					try {
						Object v = new Json(body).value();
						if (v instanceof Map && ((Map<?, ?>) v).get("id") instanceof String)
							pid = ((Map<?, ?>) v).get("id");
					} catch (IllegalArgumentException e) {
						// not JSON: no provider id
					}
				}
			} else if (status > 0) {
				sent = "yes";
			} else if (attempts > 0) {
				sent = "unknown";
			}
			if (error != null)
				System.err.println("adapter: task " + task.id + ": " + outcome + ": " + error);
			Map<String, Object> m = msg("result");
			m.put("outcome", outcome);
			m.put("attempts", attempts);
			m.put("waited_ms", waitedNs / 1_000_000);
			m.put("sent", sent);
			m.put("status", status);
			m.put("provider_id", pid);
			emit(m);
			synchronized (running) {
				running.remove(task.id);
				running.notifyAll();
			}
		}

		private Map<String, Object> msg(String type) {
			Map<String, Object> m = new LinkedHashMap<>();
			m.put("type", type);
			m.put("task", task.id);
			return m;
		}
	}

	private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);
	private static final Map<String, Reporter> running = new LinkedHashMap<>();

	/** Prints one protocol line; lines of concurrent tasks never interleave. */
	static synchronized void emit(Map<String, Object> m) {
		StringBuilder sb = new StringBuilder();
		Json.write(sb, m);
		OUT.print(sb.append('\n'));
		OUT.flush();
	}

	/** Runs the protocol with lib until shutdown or the end of input; exits 0. */
	@SuppressWarnings("unchecked")
	public static void main(Library lib) throws IOException {
		Map<String, Object> hello = new LinkedHashMap<>();
		hello.put("type", "hello");
		hello.put("protocol", 1);
		hello.put("client", lib.hello());
		hello.put("features", List.of("cancel"));
		hello.put("wall_ms", System.currentTimeMillis());
		emit(hello);
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		for (long lineno = 1; (line = in.readLine()) != null; lineno++) {
			if (line.isBlank())
				continue;
			Map<String, Object> m;
			try {
				m = (Map<String, Object>) new Json(line).value();
			} catch (IllegalArgumentException | ClassCastException e) {
				m = null;
			}
			if (m == null) {
				System.err.println("adapter: line " + lineno + ": not a JSON object, ignored");
				continue;
			}
			Object type = m.get("type");
			if ("task".equals(type)) {
				Task t = new Task(m);
				Reporter r = new Reporter(t);
				synchronized (running) {
					running.put(t.id, r);
				}
				lib.start(t, r);
			} else if ("cancel".equals(type)) {
				Reporter r;
				synchronized (running) {
					r = running.get(m.get("id"));
				}
				if (r == null || !r.cancel())
					System.err.println("adapter: line " + lineno + ": cancel of no running task, ignored");
			} else if ("clock".equals(type)) {
				Map<String, Object> c = new LinkedHashMap<>();
				c.put("type", "clock");
				c.put("wall_ms", System.currentTimeMillis());
				emit(c);
			} else if ("shutdown".equals(type)) {
				break;
			} else {
				System.err.println("adapter: line " + lineno + ": unknown type, ignored");
			}
		}
		// shutdown (or end of input): cancel what is still running, report it
		List<Reporter> left;
		synchronized (running) {
			left = new ArrayList<>(running.values());
		}
		left.forEach(Reporter::cancel);
		synchronized (running) {
			long end = System.currentTimeMillis() + 4000;
			while (!running.isEmpty() && System.currentTimeMillis() < end) {
				try {
					running.wait(100);
				} catch (InterruptedException e) {
					break;
				}
			}
		}
		OUT.flush();
		System.exit(0);
	}

	/** A small JSON reader (RFC 8259 values: objects become LinkedHashMap,
	 *  arrays ArrayList, numbers Double or Long) and writer. */
	static final class Json {
		private final String s;
		private int i;

		Json(String s) {
			this.s = s;
		}

		/** The whole text as one value; IllegalArgumentException if it is not JSON. */
		Object value() {
			Object v = read();
			ws();
			if (i != s.length())
				throw new IllegalArgumentException("trailing text at " + i);
			return v;
		}

		private void ws() {
			while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0)
				i++;
		}

		private char peek() {
			if (i >= s.length())
				throw new IllegalArgumentException("unexpected end");
			return s.charAt(i);
		}

		private void expect(char c) {
			if (peek() != c)
				throw new IllegalArgumentException("expected " + c + " at " + i);
			i++;
		}

		/** Reads an object's members or an array's elements, from its
		 *  opening character through @close, one item() each. */
		private void items(char close, Runnable item) {
			i++;
			ws();
			if (peek() == close) {
				i++;
				return;
			}
			do {
				item.run();
				ws();
			} while (peek() == ',' && ++i > 0);
			expect(close);
		}

		private Object read() {
			ws();
			char c = peek();
			if (c == '{') {
				Map<String, Object> m = new LinkedHashMap<>();
				items('}', () -> {
					ws();
					String k = string();
					ws();
					expect(':');
					m.put(k, read());
				});
				return m;
			}
			if (c == '[') {
				List<Object> a = new ArrayList<>();
				items(']', () -> a.add(read()));
				return a;
			}
			if (c == '"')
				return string();
			for (String w : new String[] {"true", "false", "null"})
				if (s.startsWith(w, i)) {
					i += w.length();
					return w.equals("null") ? null : Boolean.valueOf(w.equals("true"));
				}
			int st = i;
			while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0)
				i++;
			String n = s.substring(st, i);
			try {
				return n.matches("-?\\d+") ? (Object) Long.valueOf(n) : (Object) Double.valueOf(n);
			} catch (NumberFormatException e) {
				throw new IllegalArgumentException("bad value at " + st);
			}
		}

		private String string() {
			expect('"');
			StringBuilder b = new StringBuilder();
			for (char c; (c = peek()) != '"'; i++) {
				if (c != '\\') {
					b.append(c);
					continue;
				}
				i++;
				char e = peek();
				switch (e) {
				case 'b': b.append('\b'); break;
				case 'f': b.append('\f'); break;
				case 'n': b.append('\n'); break;
				case 'r': b.append('\r'); break;
				case 't': b.append('\t'); break;
				case 'u':
					if (i + 5 > s.length())
						throw new IllegalArgumentException("bad \\u escape");
					b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
					i += 4;
					break;
				default: b.append(e);
				}
			}
			i++;
			return b.toString();
		}

		static void write(StringBuilder sb, Object v) {
			if (v == null || v instanceof Boolean || v instanceof Number) {
				sb.append(v);
			} else if (v instanceof Map) {
				sb.append('{');
				boolean first = true;
				for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
					sb.append(first ? "" : ",");
					first = false;
					write(sb, String.valueOf(e.getKey()));
					sb.append(':');
					write(sb, e.getValue());
				}
				sb.append('}');
			} else if (v instanceof List) {
				sb.append('[');
				boolean first = true;
				for (Object o : (List<?>) v) {
					sb.append(first ? "" : ",");
					first = false;
					write(sb, o);
				}
				sb.append(']');
			} else {
				String str = v.toString();
				sb.append('"');
				for (int k = 0; k < str.length(); k++) {
					char c = str.charAt(k);
					if (c == '"' || c == '\\')
						sb.append('\\').append(c);
					else if (c < 0x20)
						sb.append(String.format("\\u%04x", (int) c));
					else
						sb.append(c);
				}
				sb.append('"');
			}
		}
	}
}
