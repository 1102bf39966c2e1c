package io.converge.consumer.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.converge.core.internal.Json;
import java.io.IOException;

/**
 * Reads one top-level string or integer field of a JSON object, on {@link Json}'s parser. Nested objects and arrays
 * are skipped; a payload that is not well-formed up to the field yields null (an id is never guessed from a broken
 * payload). The first occurrence of the field counts.
 */
public final class JsonFields {

  private JsonFields() {
  }

  /** The value of top-level {@code field} in {@code json} as text, or null. */
  public static String topLevel(String json, String field) {
    try (JsonParser p = Json.parser(json)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken value = p.nextToken();
        if (name.equals(field)) {
          if (value == JsonToken.VALUE_STRING) {
            return p.getText();
          }
          return value == JsonToken.VALUE_NUMBER_INT && p.getText().matches("-?\\d{1,30}") ? p.getText() : null;
        }
        p.skipChildren();
      }
      return null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
