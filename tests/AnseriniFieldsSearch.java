// Test oracle only (nqkit never runs Java): Anserini's BM25 search of an index, flat or
// multifield, run as a single source file against the jar Pyserini ships:
//
//   java -cp anserini-1.7.1-fatjar.jar tests/AnseriniFieldsSearch.java \
//        INDEX QUESTIONS K K1 B FIELDS OUT DOCS [INDEX QUESTIONS ... DOCS]...
//
// (any number of runs of these 8 arguments, in one JVM: its start and the compilation of
// this file are paid once)
// DOCS (a directory of JSON lines, or "-" for an INDEX already built): first build INDEX
// from it as
// `IndexCollection -collection JsonCollection -generator DefaultLuceneDocumentGenerator
// -threads 1 -storePositions -storeDocvectors [-fields title]` does (the options of
// Pyserini's DPR index but -storeRaw: a stored raw document changes no score, and
// SimpleSearcher loads each hit's stored fields, which with the raw text took 4x as long;
// -fields title when FIELDS names title), in this JVM.
// QUESTIONS: one question a line (UTF-8). FIELDS: "contents=1.0,title=0.5", or "-" for
// the flat search of "contents". For every question, OUT gets two blocks of lines
// "qi<TAB>L|A<TAB>docid<TAB>score" (score: Float.toString, which reads back to the same
// float):
//   L: Lucene's own top K through IndexSearcher, with the query Anserini builds
//      (BagOfWordsQueryGenerator.buildQuery(Map<field, weight>, analyzer, q), the query
//      of SearchCollection -fields and of SimpleSearcher.search_fields), BM25Similarity(k1, b)
//      and SimpleSearcher's sort (score, then the id as a string);
//   A: what SimpleSearcher.search_fields (Pyserini's LuceneSearcher.search(q, fields=...))
//      returns: the same list with ScoreTiesAdjusterReranker's rounded scores.
// SearchCollection itself is not run: Anserini 2.x's looks up prebuilt-index metadata on
// the network when it starts; both searches here are the classes it calls, offline.
// One process for all the questions: a JVM start, no per-hit JNI call (pyjnius costs some
// 100 us per hit read, a minute for 3,610 top-100 lists).

import io.anserini.analysis.DefaultEnglishAnalyzer;
import io.anserini.index.IndexCollection;
import io.anserini.search.ScoredDoc;
import io.anserini.search.SimpleSearcher;
import io.anserini.search.query.BagOfWordsQueryGenerator;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;

public class AnseriniFieldsSearch {
  public static void main(String[] args) throws Exception {
    for (int at = 0; at + 8 <= args.length; at += 8) {
      run(java.util.Arrays.copyOfRange(args, at, at + 8));
    }
  }

  static void run(String[] args) throws Exception {
    String index = args[0];
    List<String> questions = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
    int k = Integer.parseInt(args[2]);
    float k1 = Float.parseFloat(args[3]);
    float b = Float.parseFloat(args[4]);
    Map<String, Float> fields = new HashMap<>();
    if (!args[5].equals("-")) {
      for (String part : args[5].split(",")) {
        String[] kv = part.split("=");
        fields.put(kv[0], Float.parseFloat(kv[1]));
      }
    }
    if (!args[7].equals("-")) {
      List<String> options = new ArrayList<>(List.of(
          "-collection", "JsonCollection", "-input", args[7], "-index", index,
          "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1",
          "-storePositions", "-storeDocvectors"));
      if (fields.containsKey("title")) {
        options.addAll(List.of("-fields", "title"));
      }
      IndexCollection.main(options.toArray(new String[0]));
    }
    DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(index)));
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new BM25Similarity(k1, b));
    Sort sort = new Sort(SortField.FIELD_SCORE, new SortField("id", SortField.Type.STRING_VAL));
    StoredFields stored = reader.storedFields();
    String[] ids = new String[reader.maxDoc()];  // each document's id, loaded once
    for (int d = 0; d < ids.length; d++) {
      ids[d] = stored.document(d).get("id");
    }
    DefaultEnglishAnalyzer analyzer = DefaultEnglishAnalyzer.newDefaultInstance();
    BagOfWordsQueryGenerator generator = new BagOfWordsQueryGenerator();
    SimpleSearcher simple = new SimpleSearcher(index);
    simple.set_bm25(k1, b);
    try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[6]),
                                                      StandardCharsets.UTF_8)) {
      for (int i = 0; i < questions.size(); i++) {
        String q = questions.get(i);
        Query query = fields.isEmpty() ? generator.buildQuery("contents", analyzer, q)
                                       : generator.buildQuery(fields, analyzer, q);
        TopDocs top = searcher.search(query, k, sort, true);
        for (ScoreDoc sd : top.scoreDocs) {
          out.write(i + "\tL\t" + ids[sd.doc] + "\t"
                    + Float.toString(sd.score) + "\n");
        }
        ScoredDoc[] hits = fields.isEmpty() ? simple.search(q, k)
                                            : simple.search_fields(q, fields, k);
        for (ScoredDoc h : hits) {
          out.write(i + "\tA\t" + h.docid + "\t" + Float.toString(h.score) + "\n");
        }
      }
    }
    simple.close();
    reader.close();
  }
}
