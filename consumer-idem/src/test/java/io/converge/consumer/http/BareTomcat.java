package io.converge.consumer.http;

import jakarta.servlet.http.HttpServlet;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/** An embedded Tomcat on a random port with no framework: contexts of one filter in front of one servlet. */
final class BareTomcat implements AutoCloseable {

  private final Tomcat tomcat = new Tomcat();

  BareTomcat() throws java.io.IOException {
    tomcat.setBaseDir(Files.createTempDirectory("tomcat-idem").toString());
    tomcat.setPort(0);
    tomcat.getConnector();
  }

  /** Serves {@code servlet} at {@code contextPath}/*, every request through {@code filter}. */
  BareTomcat mount(String contextPath, jakarta.servlet.Filter filter, HttpServlet servlet) {
    Context context = tomcat.addContext(contextPath, null);
    Tomcat.addServlet(context, "app", servlet);
    context.addServletMappingDecoded("/*", "app");
    FilterDef def = new FilterDef();
    def.setFilterName("idempotency");
    def.setFilter(filter);
    context.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("idempotency");
    map.addURLPattern("/*");
    context.addFilterMap(map);
    return this;
  }

  BareTomcat start() throws LifecycleException {
    tomcat.start();
    return this;
  }

  String base() {
    return "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
  }

  @Override
  public void close() throws LifecycleException {
    tomcat.stop();
    tomcat.destroy();
  }
}
