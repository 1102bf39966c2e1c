package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Named parameters parsed once: the JDBC text, the name at each position, the values in order. */
class NamedStatementTest {

  @Test
  void eachNameBecomesAPositionalParameterRepeatedNamesIncluded() {
    NamedStatement s = NamedStatement.parse("SELECT a FROM t WHERE x = :tenant AND y = :group_1 OR z = :tenant");
    assertThat(s.sql()).isEqualTo("SELECT a FROM t WHERE x = ? AND y = ? OR z = ?");
    assertThat(s.names()).containsExactly("tenant", "group_1", "tenant");
    assertThat(s.parameterCount()).isEqualTo(3);
    assertThat(s).hasToString("SELECT a FROM t WHERE x = :tenant AND y = :group_1 OR z = :tenant");
  }

  @Test
  void castsLiteralsQuotedNamesAndCommentsAreLeftAlone() {
    NamedStatement s = NamedStatement.parse("""
        SELECT ':no'::int, 'it''s :no', "col:no" -- :no
        /* :no */ FROM t WHERE a = :yes""");
    assertThat(s.names()).containsExactly("yes");
    assertThat(s.sql()).isEqualTo("""
        SELECT ':no'::int, 'it''s :no', "col:no" -- :no
        /* :no */ FROM t WHERE a = ?""");
  }

  @Test
  void argumentsFollowThePositionsAndNullIsAValue() {
    NamedStatement s = NamedStatement.parse("VALUES (:a, :b, :a)");
    Map<String, Object> values = new HashMap<>();
    values.put("a", 1);
    values.put("b", null);
    assertThat(s.arguments(values)).containsExactly(1, null, 1);
    assertThatThrownBy(() -> s.arguments(Map.of("a", 1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("parameter :b has no value");
  }

  @Test
  void positionalParametersAndBareColonsAreRefused() {
    assertThatThrownBy(() -> NamedStatement.parse("SELECT ? , :a")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no positional parameter (?), but was: SELECT ? , :a");
    assertThatThrownBy(() -> NamedStatement.parse("SELECT a[1: 2]")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must start a parameter name at 10");
    assertThat(NamedStatement.parse("SELECT 1").names()).isEqualTo(List.of());
  }
}
