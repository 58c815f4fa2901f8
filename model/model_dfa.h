/* SPDX-License-Identifier: Apache-2.0 */
/* model_dfa.h - DFA internals (model/ only) */
#ifndef MODEL_DFA_H
#define MODEL_DFA_H
#endif
