package io.converge.saga;

import java.nio.charset.StandardCharsets;

/**
 * Turns a saga's typed data into JSON text and back; the coordinator stores the text in
 * {@code converge_saga.data} (a {@code jsonb} column, so it must be valid JSON). Converge takes no JSON library
 * into its API: wrap the one the application uses (Jackson's {@code ObjectMapper}, Gson, ...).
 * Implementations must be thread-safe; a failure to encode or decode is thrown as it is.
 *
 * @param <D> the saga's data type
 */
public interface SagaCodec<D> {

  /** The JSON text of {@code data}. */
  String encode(D data);

  /** The data of the JSON text {@code json}. */
  D decode(String json);

  /** The payload bytes (UTF-8) of a JSON text, for command builders. */
  static byte[] utf8(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  /** The identity codec: the data is the JSON text itself. */
  static SagaCodec<String> json() {
    return new SagaCodec<>() {

      @Override
      public String encode(String data) {
        return data;
      }

      @Override
      public String decode(String json) {
        return json;
      }
    };
  }
}
