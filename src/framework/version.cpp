#include "afm/version.h"

namespace afm {

const char* version() { return AFM_VERSION; }

}  // namespace afm
