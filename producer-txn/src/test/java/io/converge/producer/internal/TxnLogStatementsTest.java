package io.converge.producer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The transaction log's writes look the partition of their row's day up once per row: the lookup (a catalog read and
 * a name parse) is kept in a subquery of its own, whose result serves the null test, the snapshot test and the
 * refusal's text alike. The routing's behaviour is TxnLogPartitionsIT's.
 */
class TxnLogStatementsTest {

  private static int count(String sql, String what) {
    Matcher m = Pattern.compile(Pattern.quote(what)).matcher(sql);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  @Test
  void eachRoutedWriteLooksItsPartitionUpOnce() {
    for (String sql : new String[]{TxnLogStatements.RECORD_OR_FAIL.sql(), TxnLogStatements.RECORD.sql(),
        TxnLogStatements.FENCE.sql(), TxnLogStatements.RECORD_ALL}) {
      assertThat(count(sql, "to_regclass(")).as(sql).isEqualTo(1);
      assertThat(sql).contains("AS p OFFSET 0) AS lookup").contains("WHERE v.oid = p)").contains("|| p::text AS date)");
    }
  }
}
