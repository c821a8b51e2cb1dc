/* confdefs.h */
#define PACKAGE_NAME "easypp"
#define PACKAGE_TARNAME "easypp"
#define PACKAGE_VERSION "0.1.0"
#define PACKAGE_STRING "easypp 0.1.0"
#define PACKAGE_BUGREPORT ""
#define PACKAGE_URL ""
#define PACKAGE "easypp"
#define VERSION "0.1.0"
