#include <stdio.h>

void myPrintHello(void) {

  printf("Hello makefiles!\n");

  return;
}
