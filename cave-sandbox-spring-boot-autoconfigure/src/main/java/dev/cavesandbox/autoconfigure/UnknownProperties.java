package dev.cavesandbox.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The {@code cave.sandbox.*} keys of an environment that no property binds, each named in
 * a WARN at startup with the nearest property that does: a typo such as
 * {@code cave.sandbox.timout=5s} would otherwise leave the default in force without a
 * word. The properties are those of the configuration metadata on the class path
 * ({@value #METADATA} of this module, of {@code cave-sandbox-spring-ai} where present),
 * which {@code spring-boot-configuration-processor} generates from the properties
 * records; where there is none (a class path stripped of it), nothing is reported.
 * <p>
 * Keys are compared as Boot binds them: {@code cave.sandbox.maxConcurrent} and
 * {@code cave.sandbox.max_concurrent} are {@code cave.sandbox.max-concurrent}; entries of
 * maps and lists ({@code cave.sandbox.env.set.NAME}, {@code cave.sandbox.env.pass[0]})
 * belong to their property. Environment variables are left out, as Boot's own check of
 * unbound properties leaves them out: a variable named like a property need not be one
 * (Kubernetes gives every pod {@code CAVE_SANDBOX_SERVICE_HOST} and
 * {@code CAVE_SANDBOX_PORT} where a service is named {@code cave-sandbox}).
 */
final class UnknownProperties {

	/** Where the configuration metadata is, in every jar that has some. */
	static final String METADATA = "META-INF/spring-configuration-metadata.json";

	private static final String PREFIX = "cave.sandbox.";

	private static final Pattern PROPERTIES = Pattern.compile("\"properties\"\\s*:\\s*\\[");

	private static final Pattern HINTS = Pattern.compile("\"hints\"\\s*:\\s*\\[");

	private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"\\\\]+)\"");

	private static final Pattern TYPE = Pattern.compile("\"type\"\\s*:\\s*\"([^\"\\\\]+)\"");

	private static final Logger logger = LoggerFactory.getLogger(UnknownProperties.class);

	private final List<Property> properties;

	private UnknownProperties(List<Property> properties) {
		this.properties = properties;
	}

	/**
	 * Log one WARN for each unknown key of an environment.
	 * @param environment the application's environment
	 * @param classLoader where the configuration metadata is
	 */
	static void warn(Environment environment, @Nullable ClassLoader classLoader) {
		if (environment instanceof ConfigurableEnvironment configurable) {
			fromMetadata(classLoader).unknown(configurable).forEach(logger::warn);
		}
	}

	/**
	 * Read the {@code cave.sandbox.*} properties of every configuration metadata file.
	 * @param classLoader where the files are
	 * @return the properties; none where no file can be read
	 */
	static UnknownProperties fromMetadata(@Nullable ClassLoader classLoader) {
		List<Property> properties = new ArrayList<>();
		try {
			ClassLoader loader = (classLoader != null) ? classLoader : UnknownProperties.class.getClassLoader();
			Enumeration<URL> files = loader.getResources(METADATA);
			while (files.hasMoreElements()) {
				properties.addAll(read(files.nextElement()));
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.debug("cave-sandbox: no check of unknown cave.sandbox.* keys: cannot read {}", METADATA, ex);
			return new UnknownProperties(List.of());
		}
		properties.sort(Comparator.comparing(Property::name));
		return new UnknownProperties(List.copyOf(properties));
	}

	/**
	 * The {@code cave.sandbox.*} properties of one metadata file: each {@code name} of
	 * its {@code properties} array with the {@code type} after it. Read with patterns,
	 * not a JSON parser: Jackson need not be on the class path, and Boot's
	 * {@code BasicJsonParser} splits descriptions that hold commas or brackets.
	 */
	private static List<Property> read(URL file) throws IOException {
		String json;
		try (InputStream in = file.openStream()) {
			json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		Matcher start = PROPERTIES.matcher(json);
		if (!start.find()) {
			return List.of();
		}
		Matcher end = HINTS.matcher(json);
		String section = json.substring(start.end(), end.find(start.end()) ? end.start() : json.length());
		List<Property> properties = new ArrayList<>();
		Matcher name = NAME.matcher(section);
		boolean found = name.find();
		while (found) {
			String property = name.group(1);
			int from = name.end();
			found = name.find();
			Matcher type = TYPE.matcher(section).region(from, found ? name.start() : section.length());
			if (property.startsWith(PREFIX)) {
				properties.add(new Property(property, ConfigurationPropertyName.of(property),
						type.find() && isContainer(type.group(1))));
			}
		}
		return properties;
	}

	/** Whether a property's keys have entries below it: a map, a list, an array. */
	private static boolean isContainer(String type) {
		return type.startsWith("java.util.Map") || type.startsWith("java.util.List") || type.startsWith("java.util.Set")
				|| type.startsWith("java.util.Collection") || type.endsWith("[]");
	}

	/**
	 * Name the unknown {@code cave.sandbox.*} keys of an environment.
	 * @param environment the environment
	 * @return one message for each unknown key, in the order of the property sources;
	 * none for the environment variables
	 */
	List<String> unknown(ConfigurableEnvironment environment) {
		if (this.properties.isEmpty()) {
			return List.of();
		}
		Set<String> messages = new LinkedHashSet<>();
		for (PropertySource<?> source : environment.getPropertySources()) {
			if (source instanceof EnumerablePropertySource<?> enumerable
					&& !(source instanceof SystemEnvironmentPropertySource)) {
				for (String key : enumerable.getPropertyNames()) {
					String message = unknownProperty(key);
					if (message != null) {
						messages.add(message);
					}
				}
			}
		}
		return List.copyOf(messages);
	}

	private @Nullable String unknownProperty(String key) {
		if (!key.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
			return null;
		}
		ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key, '.');
		for (Property property : this.properties) {
			if (property.key().equals(name) || (property.container() && property.key().isAncestorOf(name))) {
				return null;
			}
		}
		String typed = uniform(key.substring(PREFIX.length()));
		Property nearest = nearest(typed);
		return "unknown property " + key + ((nearest != null) ? ", did you mean " + nearest.name() + "?"
				: ": no cave.sandbox property binds it");
	}

	/**
	 * The property nearest to a typed name, by edit distance of their uniform forms, if
	 * it is near enough to be the one meant: at most 2 edits, or a third of the typed
	 * name.
	 */
	private @Nullable Property nearest(String typed) {
		Property nearest = null;
		int best = Integer.MAX_VALUE;
		for (Property property : this.properties) {
			int distance = distance(typed, uniform(property.name().substring(PREFIX.length())));
			if (distance < best) {
				best = distance;
				nearest = property;
			}
		}
		return (best <= Math.max(2, typed.length() / 3)) ? nearest : null;
	}

	/**
	 * A name as it is compared for the nearest property: lower case letters and digits
	 * only, so that {@code max_concurent} is one edit from {@code max-concurrent}.
	 */
	private static String uniform(String name) {
		return name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
	}

	/** The Levenshtein distance: insertions, deletions and substitutions. */
	static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/**
	 * A property of the metadata.
	 *
	 * @param name its name, as {@code cave.sandbox.max-concurrent}
	 * @param key its name as Boot compares keys with it
	 * @param container whether keys below it are its entries (a map or a list)
	 */
	private record Property(String name, ConfigurationPropertyName key, boolean container) {

	}

}
