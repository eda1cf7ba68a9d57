// Test oracle only (nqkit never runs Java): Pyserini's default English analyzer over many
// strings in one JVM, run as a single source file against the jar Pyserini ships:
//
//   java -cp anserini-1.7.1-fatjar.jar tests/AnseriniAnalyze.java IN OUT
//
// IN: one JSON string a line (UTF-8). OUT: a first line of timings
// {"jvm_start": s, "analyze": s}, then one JSON array of terms a line, every non-ASCII
// character escaped (backslash-u and four hex digits, lone surrogates included), in IN's order.
// The analyzer is the one pyserini.analysis.get_lucene_analyzer() returns
// (DefaultEnglishAnalyzer.newStemmingInstance("porter")), applied by the method
// pyserini.analysis.Analyzer.analyze calls (AnalyzerUtils.analyze); only the way the
// strings travel differs: a file instead of one JNI call each (some 75 us a string
// through pyjnius, 12 s for the 160,000 strings of the analyzer tests).

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.anserini.analysis.AnalyzerUtils;
import io.anserini.analysis.DefaultEnglishAnalyzer;
import java.io.BufferedWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.analysis.Analyzer;

public class AnseriniAnalyze {
  public static void main(String[] args) throws Exception {
    Analyzer analyzer = DefaultEnglishAnalyzer.newStemmingInstance("porter");
    AnalyzerUtils.analyze(analyzer, "warm up");
    ObjectMapper mapper = JsonMapper.builder()
        .enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    double started = ManagementFactory.getRuntimeMXBean().getUptime() / 1e3;
    long t0 = System.nanoTime();
    List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
    List<List<String>> results = new ArrayList<>(lines.size());
    for (String line : lines) {
      results.add(AnalyzerUtils.analyze(analyzer, mapper.readValue(line, String.class)));
    }
    double analyzed = (System.nanoTime() - t0) / 1e9;
    try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[1]),
                                                      StandardCharsets.UTF_8)) {
      out.write("{\"jvm_start\": " + started + ", \"analyze\": " + analyzed + "}\n");
      for (List<String> terms : results) {
        out.write(mapper.writeValueAsString(terms));
        out.write("\n");
      }
    }
  }
}
