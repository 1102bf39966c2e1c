package io.converge.console.spring;

import io.converge.console.web.Console;
import io.converge.console.web.ConsoleServlet;
import jakarta.servlet.http.HttpServlet;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot auto-configuration of the console, on with {@code converge.console.enabled=true} in a servlet web
 * application with a {@link DataSource}: the {@link Console} on that data source (its audit migration applied)
 * and its servlet at {@code converge.console.path} (default {@code /converge/console}), serving this host only
 * unless {@code converge.console.allow-remote=true}, actions to {@code converge.console.action-role} only.
 * Both back off when the application defines its own.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({HttpServlet.class, ServletRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "converge.console", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(ConsoleProperties.class)
class ConvergeConsoleAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  Console convergeConsole(DataSource dataSource, ConsoleProperties properties) {
    return Console.builder().dataSource(dataSource).thresholds(properties.stuckThresholds())
        .basePath(properties.path()).build();
  }

  @Bean
  @ConditionalOnMissingBean(name = "convergeConsoleServlet")
  ServletRegistrationBean<ConsoleServlet> convergeConsoleServlet(Console console, ConsoleProperties properties) {
    ServletRegistrationBean<ConsoleServlet> bean = new ServletRegistrationBean<>(
        ConsoleServlet.builder(console).operatorHeader(properties.operatorHeader())
            .roleHeader(properties.roleHeader()).actionRole(properties.actionRole()).readRole(properties.readRole())
            .allowRemote(properties.allowRemote()).build(),
        properties.path() + "/*");
    bean.setName("convergeConsole");
    return bean;
  }
}
