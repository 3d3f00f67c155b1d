/* low stage: its own header (allowed) and a high header (against the order). */
#include <stdio.h>
#include "abl/low/l.h"
#include "abl/high/h.h"
