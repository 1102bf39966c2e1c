package io.converge.consumer.spring;

import io.converge.consumer.http.Idempotent;
import io.converge.consumer.http.IdempotentEndpoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.context.ApplicationContext;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The {@link Idempotent} handler methods of Spring MVC as endpoints, one per mapped method and path
 * pattern (a mapping without methods gives {@code *}). Loaded only when spring-webmvc is present. The
 * patterns are the mapping's, relative to the DispatcherServlet: it must be mapped at {@code /}. A pattern the
 * filter cannot compile (one that only {@code AntPathMatcher} reads, a {@code **} in the middle) fails, naming the
 * handler method and the pattern.
 */
final class IdempotentMethodScanner {

  private IdempotentMethodScanner() {
  }

  static List<IdempotentEndpoint> scan(ApplicationContext context, Duration expectedDuration) {
    List<IdempotentEndpoint> out = new ArrayList<>();
    for (RequestMappingHandlerMapping mapping : context.getBeansOfType(RequestMappingHandlerMapping.class).values()) {
      for (Map.Entry<RequestMappingInfo, HandlerMethod> e : mapping.getHandlerMethods().entrySet()) {
        Idempotent idempotent = e.getValue().getMethodAnnotation(Idempotent.class);
        if (idempotent == null) {
          continue;
        }
        List<String> methods = e.getKey().getMethodsCondition().getMethods().stream().map(RequestMethod::name).toList();
        for (String method : methods.isEmpty() ? List.of("*") : methods) {
          for (String pattern : e.getKey().getPatternValues()) {
            try {
              out.add(new IdempotentEndpoint(method, pattern, expectedDuration, idempotent.required(), List.of()));
            } catch (IllegalArgumentException ex) {
              throw new IllegalArgumentException("@Idempotent " + e.getValue() + ": " + ex.getMessage(), ex);
            }
          }
        }
      }
    }
    return out;
  }

  static boolean present() {
    return org.springframework.util.ClassUtils.isPresent(
        "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping",
        IdempotentMethodScanner.class.getClassLoader());
  }
}
