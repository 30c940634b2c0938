// An innocent module of the package: it only says hello (padded, so that other code of its length fits).
export const greeting = "hello";                                                                                                                                                                                                        
