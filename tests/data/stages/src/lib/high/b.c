/* high stage: downwards, allowed. */
#include "abl/low/l.h"
#include "abl/high/h.h"
