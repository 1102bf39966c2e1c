package io.converge.consumer;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** Which database errors mean "the history table is missing": exactly the no-such-table states, nothing else. */
class TransitionStatementsTest {

  private static final String MISSING = "ERROR: relation \"converge_state_transition\" does not exist";

  @Test
  void noSuchTableNamingTheHistoryIsMissingHistory() {
    assertTrue(TransitionStatements.isHistoryMissing(new SQLException(MISSING, "42P01")));
    assertTrue(TransitionStatements.isHistoryMissing(
        new SQLException("Table \"CONVERGE_STATE_TRANSITION\" not found", "42S02")));
    assertTrue(TransitionStatements.isHistoryMissing(
        new SQLException("Table \"CONVERGE_STATE_TRANSITION\" not found", "42102")));
  }

  @Test
  void otherErrorsOfClass42NamingTheTableAreNotMissingHistory() {
    assertFalse(TransitionStatements.isHistoryMissing(
        new SQLException("ERROR: permission denied for table converge_state_transition", "42501")));
    assertFalse(TransitionStatements.isHistoryMissing(
        new SQLException("ERROR: column \"tenant\" of relation \"converge_state_transition\" does not exist",
            "42703")));
    assertFalse(TransitionStatements.isHistoryMissing(new SQLException(MISSING, (String) null)));
  }

  @Test
  void aMissingTableOfAnotherNameIsNotMissingHistory() {
    assertFalse(TransitionStatements.isHistoryMissing(
        new SQLException("ERROR: relation \"payments\" does not exist", "42P01")));
  }
}
