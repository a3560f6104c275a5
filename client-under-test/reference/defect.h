/* defect.h -- the compile-time switch that turns the reference into one faulty variant. */
#ifndef REF_DEFECT_H
#define REF_DEFECT_H

#include <stdbool.h>
#include <string.h>

/*
 * The Makefile compiles every source of this folder once per variant with
 * -DDEFECT=<name>: none (the reference itself), storm, nojitter, solo,
 * retry4xx, hidden, newkey, blindpost, failreport, memkey, leakkey,
 * overbudget, wakeup, whitespace, nocap, silentretry, nopace,
 * fixeddelay, newbody, giveup. Each defect changes exactly one
 * behaviour, marked "DEFECT <name>:" where it is made
 * (docs/reference-client.md lists them with the check each one is meant
 * to fail). A build without -DDEFECT is the reference.
 */
#ifndef DEFECT
#define DEFECT none
#endif

#define REF_STR2(x) #x
#define REF_STR(x)  REF_STR2(x)

/* The variant's name: "none" for the reference. */
#define REF_DEFECT_NAME REF_STR(DEFECT)

/* True when this binary was built with defect @name. A constant the
 * compiler folds, so the reference carries no trace of the defects' code. */
static inline bool defect_is(const char *name)
{
	return strcmp(REF_DEFECT_NAME, name) == 0;
}

#endif
