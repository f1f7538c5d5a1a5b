// Spark's own Bloom filter loop, for the `spark/` bench group's keys:
// BloomFilter.create(n, 0.01) (Spark 4.3: version 2), n members put with
// putLong, then n queries (half members) with mightContainLong, timed per
// round after warm-up rounds; prints each round and the median in ns per
// key. Run by jvm.sh against the spark-sketch jar pyspark ships.
import org.apache.spark.util.sketch.BloomFilter;
import java.util.Arrays;

public class MightContain {
    static long mix(long x) {
        x += 0x9e3779b97f4a7c15L;
        x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
        x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
        return x ^ (x >>> 31);
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args.length > 0 ? args[0] : "10000000");
        int rounds = Integer.parseInt(args.length > 1 ? args[1] : "7");
        long[] members = new long[n];
        long[] queries = new long[n];
        for (int i = 0; i < n; i++) {
            members[i] = mix(((long) i) << 1);
            queries[i] = (i % 2 == 0) ? mix(((long) (i / 2)) << 1) : mix((((long) i) << 1) | 1);
        }
        BloomFilter f = BloomFilter.create(n, 0.01);
        long t0 = System.nanoTime();
        for (long m : members) {
            f.putLong(m);
        }
        double insertNs = (System.nanoTime() - t0) / (double) n;
        double[] ns = new double[rounds];
        long found = 0;
        for (int r = -3; r < rounds; r++) { // three warm-up rounds
            found = 0;
            long t = System.nanoTime();
            for (long q : queries) {
                if (f.mightContainLong(q)) found++;
            }
            double per = (System.nanoTime() - t) / (double) n;
            if (r >= 0) ns[r] = per;
        }
        double[] sorted = ns.clone();
        Arrays.sort(sorted);
        System.out.printf("spark %s: bits %d, k from Spark's sizing; putLong (first, cold) %.2f ns/key%n",
            System.getProperty("java.version"), f.bitSize(), insertNs);
        System.out.printf("mightContainLong rounds (ns/key): %s%n", Arrays.toString(ns));
        System.out.printf("mightContainLong median: %.2f ns/key (the last round found %d)%n", sorted[rounds / 2], found);
    }
}
