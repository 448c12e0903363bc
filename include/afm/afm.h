// The afm framework: include this one header.
#pragma once

#include "afm/errors.h"
#include "afm/generable.h"
#include "afm/generated_content.h"
#include "afm/generation_schema.h"
#include "afm/guardrail.h"
#include "afm/model.h"
#include "afm/options.h"
#include "afm/session.h"
#include "afm/tool.h"
#include "afm/transcript.h"
#include "afm/version.h"
