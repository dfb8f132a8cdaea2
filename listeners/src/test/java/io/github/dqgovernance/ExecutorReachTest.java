package io.github.dqgovernance;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import org.apache.spark.SparkContext;
import org.junit.jupiter.api.Test;

/** Where the executors find the jar: scala-library's jar plays ours, spark-core's (another directory) Spark's. */
class ExecutorReachTest {
  static final Class<?> OURS = scala.Option.class;
  static final String OUR_JAR = new File(OURS.getProtectionDomain().getCodeSource().getLocation().getPath()).getName();

  static boolean reachable(String master, String jars, String executorClassPath) {
    return ExecutorReach.reachable(master, jars, executorClassPath, OURS, SparkContext.class);
  }

  @Test
  void aLocalMasterIsOneJvm() {
    assertTrue(reachable("local[2]", "", ""));
  }

  @Test
  void aClusterWithTheJarOnTheDriverAloneIsNot() {
    assertFalse(reachable("local-cluster[1,1,1024]", "", ""));
    assertFalse(reachable("spark://h:7077", "/opt/other.jar", "/opt/other.jar"));
  }

  @Test
  void sparkJarsOrTheExecutorsClassPathReachThem() {
    assertTrue(reachable("yarn", "/opt/a.jar, file:/opt/x/" + OUR_JAR, ""));
    assertTrue(reachable("yarn", "", "/opt/y/" + OUR_JAR));
    assertTrue(reachable("yarn", "", "/a.jar" + File.pathSeparator + "/opt/extra/*"));
  }

  @Test
  void theJarBesideSparksOwnReachesThem() {
    assertTrue(ExecutorReach.reachable("yarn", "", "", org.apache.spark.SparkConf.class, SparkContext.class));
  }
}
