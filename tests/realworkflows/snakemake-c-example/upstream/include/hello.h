void myPrintHelloMake(void);
