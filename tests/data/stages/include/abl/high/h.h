/* high public header: downwards, allowed. */
#include "abl/low/l.h"
