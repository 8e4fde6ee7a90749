/* Uses the installed user-region API: one region around a short sleep. */
#include <stdio.h>
#include <time.h>

#include "scalea/scalea.h"

int main(void) {
  SCALEA_REGION_BEGIN("consumer_region");
  struct timespec ts = {0, 5 * 1000 * 1000};
  nanosleep(&ts, NULL);
  SCALEA_REGION_END("consumer_region");
  printf("consumer: measuring=%d\n", scalea_measure_enabled());
  return 0;
}
