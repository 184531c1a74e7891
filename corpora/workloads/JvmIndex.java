// Builds an inverted index over generated documents, runs queries and keeps
// per-author statistics; runs for args[0] seconds.
import java.util.*;

public class JvmIndex {
    static final String[] WORDS = ("time person year way day thing man world life hand part child eye woman place work "
        + "week case point government company number group problem fact network kernel memory page cache swap "
        + "compress table huffman deflate stream buffer queue thread socket packet").split(" ");

    record Doc(int id, String author, String title, String body, double score) {}

    public static void main(String[] args) throws Exception {
        long end = System.currentTimeMillis() + (long) (Double.parseDouble(args.length > 0 ? args[0] : "40") * 1000);
        Random r = new Random(99);
        Map<String, List<Integer>> index = new HashMap<>();
        Map<String, DoubleSummaryStatistics> byAuthor = new TreeMap<>();
        ArrayList<Doc> docs = new ArrayList<>();
        long hits = 0;
        int id = 0;
        while (System.currentTimeMillis() < end) {
            for (int k = 0; k < 20000; k++, id++) {
                StringBuilder body = new StringBuilder();
                int n = 15 + r.nextInt(80);
                for (int w = 0; w < n; w++) body.append(WORDS[r.nextInt(WORDS.length)]).append(' ');
                String author = "author-" + r.nextInt(2000);
                Doc d = new Doc(id, author, WORDS[r.nextInt(WORDS.length)] + " " + WORDS[r.nextInt(WORDS.length)],
                    body.toString(), r.nextGaussian() * 10 + 50);
                docs.add(d);
                for (String w : new HashSet<>(Arrays.asList(d.body().split(" "))))
                    index.computeIfAbsent(w, x -> new ArrayList<>()).add(d.id());
                byAuthor.computeIfAbsent(author, x -> new DoubleSummaryStatistics()).accept(d.score());
            }
            if (docs.size() > 400000) {
                docs.subList(0, 100000).clear();
                for (List<Integer> l : index.values()) l.removeIf(i -> i < docs.get(0).id());
            }
            for (int q = 0; q < 200; q++) {
                List<Integer> a = index.getOrDefault(WORDS[r.nextInt(WORDS.length)], List.of());
                List<Integer> b = index.getOrDefault(WORDS[r.nextInt(WORDS.length)], List.of());
                Set<Integer> s = new HashSet<>(a.subList(Math.max(0, a.size() - 5000), a.size()));
                for (int x : b.subList(Math.max(0, b.size() - 5000), b.size())) if (s.contains(x)) hits++;
            }
        }
        System.out.println("docs " + docs.size() + " hits " + hits + " authors " + byAuthor.size());
    }
}
