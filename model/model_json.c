/* SPDX-License-Identifier: Apache-2.0 */
/* model_json.c - placeholder until implemented */
#include "config.h"
#include "model/model_int.h"
